// ompx_io_get_all_settings reports every setting of Settings.def, every
// layer's, in its order: name, value in force, default, the environment's
// text and the origin, kind, layer, valid values and one line of doc. A
// value from the environment is shown with its origin; a refused one as
// refused, with the default in force. A short array gets the first entries
// and the total; a caller's newer, longer struct gets what the library
// knows at its own stride; a size below the first version's is EINVAL.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic -I%S/../../../common/base/include
// RUN: env OMPX_IO_CHUNK_SIZE=4M LIBOMPTARGET_AMDGPU_AIS_ANY_FILESYSTEM=on \
// RUN:   OFFLOADIO_STAGING_BUFFERS=banana -u OFFLOADIO_PAGEABLE_PATH \
// RUN:   %libomptarget-run-generic 2>&1 | %fcheck-generic
// Without an offload-io plugin (the stock one loaded): ENODEV.
// RUN: env ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH=%stock-ld-path \
// RUN:   OFFLOADIO_EXPECT_PLUGIN_DIR=%stock-plugin-dir \
// RUN:   %libomptarget-run-generic stock | %fcheck-generic --check-prefix=STOCK

#include <errno.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "offload_io_test.h"
#include "ompx_io.h"

// The declared names, in order, from the one declaration of every setting.
static const char *const Declared[] = {
#define OFFLOADIO_SETTING(Id, Name, Kind, Layer, Default, Min, Max, Choices,   \
                          Doc)                                                 \
  Name,
#include "offloadio/Settings.def"
};
#define NUM_DECLARED (sizeof(Declared) / sizeof(*Declared))

static const char *originName(int Origin) {
  switch (Origin) {
  case OMPX_IO_SETTING_DEFAULT:
    return "default";
  case OMPX_IO_SETTING_ENVIRONMENT:
    return "environment";
  case OMPX_IO_SETTING_INVALID:
    return "refused";
  }
  return "?";
}

/// A caller built against a later header, whose struct has grown.
typedef struct {
  ompx_io_setting_info_t known;
  char later[40];
} newer_setting_info_t;

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  // libomptarget loads the plugins once the program uses a device.
  (void)omp_get_num_devices();
  size_t N = 12345;

  if (argc > 1 && !strcmp(argv[1], "stock")) {
    errno = 0;
    printf("stock: %d %s %zu\n", ompx_io_get_all_settings(0, NULL, 0, &N),
           strerror(errno), N);
    // STOCK: stock: -1 No such device 12345
    return 0;
  }

  // The count alone, then every entry.
  OT_EXPECT(ompx_io_get_all_settings(0, NULL, 0, &N) == 0, "count only");
  if (N > 1000)
    N = 0;
  OT_EXPECT(N == NUM_DECLARED, "%zu settings, %zu declared", N,
            (size_t)NUM_DECLARED);
  ompx_io_setting_info_t *S = calloc(N + 1, sizeof(*S));
  S[0].size = sizeof(*S);
  size_t Count = 0;
  OT_EXPECT(ompx_io_get_all_settings(0, S, N, &Count) == 0 && Count == N,
            "every setting");
  int InOrder = 1, Sized = 1, Described = 1;
  for (size_t I = 0; I < N && I < NUM_DECLARED; ++I) {
    InOrder &= !strcmp(S[I].name, Declared[I]);
    Sized &= S[I].size == sizeof(*S);
    // A file name's value and default are empty when it names none.
    int NoneAllowed = S[I].kind == OMPX_IO_KIND_PATH;
    Described &= *S[I].doc && *S[I].valid && *S[I].layer_name &&
                 (NoneAllowed || (*S[I].default_value && *S[I].value));
    printf("setting %s value=%s default=%s env=%s origin=%s kind=%d "
           "layer=%s/%d valid=\"%s\" doc=\"%s\"\n",
           S[I].name, S[I].value, S[I].default_value, S[I].env_value,
           originName(S[I].origin), S[I].kind, S[I].layer_name, S[I].layer,
           S[I].valid, S[I].doc);
  }
  OT_EXPECT(InOrder, "the names of Settings.def, in its order");
  OT_EXPECT(Sized, "each entry's size is the bytes filled");
  OT_EXPECT(Described, "each entry has value, default, valid values, layer "
                       "and doc");
  // CHECK-DAG: setting LIBOMPTARGET_INFO value={{-?[0-9]+}} default=0 env={{.*}} kind=4 layer=plugin/0 valid="an integer"
  // CHECK-DAG: setting OFFLOADIO_PAGEABLE_PATH value=auto default=auto env= origin=default kind=3 layer=device/1 valid="one of auto, staged, lock" doc="how copies from and to unlocked memory go"
  // CHECK-DAG: setting OMPX_IO_CHUNK_SIZE value=4M default=2M env=4M origin=environment kind=2 layer=io-engine/2 valid="a size from 65536 to 1073741824 (K/M/G suffixes allowed)"
  // CHECK-DAG: setting OFFLOADIO_STAGING_BUFFERS value=32 default=32 env=banana origin=refused kind=1 layer=device/1 valid="an integer from 1 to 4096"
  // CHECK-DAG: setting LIBOMPTARGET_AMDGPU_AIS_ANY_FILESYSTEM value=on default=off env=on origin=environment kind=0 layer=amdgpu/5
  // CHECK-DAG: setting LIBOMPTARGET_STACK_SIZE {{.*}} layer=cuda/4
  // CHECK-DAG: setting LIBOMPTARGET_STACK_SIZE {{.*}} layer=amdgpu/5
  // CHECK-DAG: offload-io[{{[0-9]+}}]: warning: ignoring OFFLOADIO_STAGING_BUFFERS='banana': expected an integer from 1 to 4096; using 32

  // A device's plugin answers the same.
  size_t DevCount = 0;
  OT_EXPECT(ompx_io_get_all_settings(omp_get_initial_device(), NULL, 0,
                                     &DevCount) == 0 &&
                DevCount == N,
            "the initial device: any plugin");

  // Too small an array: the first entries, the total, nothing past them.
  memset(S, 0x5a, (N + 1) * sizeof(*S));
  S[0].size = sizeof(*S);
  Count = 0;
  OT_EXPECT(ompx_io_get_all_settings(0, S, 2, &Count) == 0 && Count == N,
            "two entries of %zu", Count);
  OT_EXPECT(!strcmp(S[0].name, Declared[0]) && !strcmp(S[1].name, Declared[1]),
            "the first two");
  OT_EXPECT((unsigned char)S[2].name[0] == 0x5a && S[2].size != sizeof(*S),
            "the third untouched");

  // A newer caller: its stride, and only the bytes the library knows.
  newer_setting_info_t *Newer = calloc(N, sizeof(*Newer));
  memset(Newer, 0x5a, N * sizeof(*Newer));
  Newer[0].known.size = sizeof(*Newer);
  OT_EXPECT(ompx_io_get_all_settings(0, &Newer[0].known, N, &Count) == 0,
            "a newer struct");
  int Strided = 1;
  for (size_t I = 0; I < N && I < NUM_DECLARED; ++I)
    Strided &= !strcmp(Newer[I].known.name, Declared[I]) &&
               Newer[I].known.size == sizeof(ompx_io_setting_info_t) &&
               (unsigned char)Newer[I].later[0] == 0x5a &&
               (unsigned char)Newer[I].later[39] == 0x5a;
  OT_EXPECT(Strided, "each entry at the caller's stride, its later members "
                     "untouched");

  // Bad arguments: EINVAL, and the count is left alone.
  S[0].size = 8;
  Count = 777;
  EXPECT_ERRNO(ompx_io_get_all_settings(0, S, 1, &Count), EINVAL, "size 8");
  OT_EXPECT(Count == 777, "count untouched");
  // CHECK: size 8: ompx_io_get_all_settings: settings[0].size is less than the first version of ompx_io_setting_info_t (set it to sizeof(ompx_io_setting_info_t))
  printf("size 8: %s\n", ompx_io_last_error());
  EXPECT_ERRNO(ompx_io_get_all_settings(0, NULL, 1, &Count), EINVAL,
               "settings NULL");
  EXPECT_ERRNO(ompx_io_get_all_settings(0, S, 1, NULL), EINVAL, "count NULL");
  // A device no plugin serves.
  EXPECT_ERRNO(ompx_io_get_all_settings(1000, NULL, 0, &Count), ENODEV,
               "device 1000");
  free(Newer);
  free(S);
  OT_SUMMARY();
  // CHECK: failures: 0
  return 0;
}
