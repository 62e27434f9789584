// ompx_safetensors_load_split and ompx_safetensors_load_mapped
// (ompx_safetensors.h) through our plugin: a sharded checkpoint allocated
// and loaded onto devices 0, 1 and 2 (as many as there are, up to three) in
// one call, every byte checked on its device, the split balanced within the
// largest tensor and the same each time; a subset by name; an explicit map
// with the initial device in it; a placement kept after its checkpoint is
// closed; and the refusals, each leaving *placement NULL: devices that do
// not exist or are listed twice, a map entry that is no device, unknown and
// repeated names, NULL arguments, a device allocation that fails (a tensor
// of 8 TiB in a sparse file: ENOMEM, the allocations before it freed), and
// a file cut after open (EIO, nothing kept).
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: rm -rf %t.d && mkdir -p %t.d
// RUN: %libomptarget-run-generic %t.d | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic %t.d | %fcheck-generic

#include <dlfcn.h>
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io.h"
#include "ompx_safetensors.h"

static const char *dir;

static const char *path(const char *name) {
  static char buf[8][4096];
  static int next;
  char *p = buf[next++ % 8];
  snprintf(p, 4096, "%s/%s", dir, name);
  return p;
}

/// Write a safetensors file: header text json, then data bytes i*7+seed
/// (data bytes of them; the file is extended to sparse bytes, if larger).
static void write_file(const char *name, const char *json, size_t data,
                       unsigned seed, uint64_t sparse) {
  int fd = open(path(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  uint64_t n = strlen(json);
  unsigned char len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = (unsigned char)(n >> (8 * i));
  if (fd < 0 || write(fd, len, 8) != 8 || write(fd, json, n) != (ssize_t)n)
    abort();
  unsigned char *bytes = malloc(data + 1);
  for (size_t i = 0; i < data; ++i)
    bytes[i] = (unsigned char)(i * 7 + seed);
  if (write(fd, bytes, data) != (ssize_t)data)
    abort();
  free(bytes);
  if (sparse > data && ftruncate(fd, (off_t)(8 + n + sparse)) != 0) {
    perror("ftruncate");
    abort();
  }
  close(fd);
}

static void write_text(const char *name, const char *text) {
  int fd = open(path(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
    abort();
  close(fd);
}

/// A shard of U8 tensors named <prefix>.<i> of the given sizes, back to
/// back; the data pattern is seeded by seed.
static void write_shard(const char *name, const char *prefix,
                        const unsigned *sizes, int n, unsigned seed) {
  char json[4096] = "{";
  uint64_t off = 0;
  for (int i = 0; i < n; ++i) {
    char entry[256];
    snprintf(entry, sizeof entry,
             "%s\"%s.%d\": {\"dtype\": \"U8\", \"shape\": [%u], "
             "\"data_offsets\": [%llu, %llu]}",
             i ? ", " : "", prefix, i, sizes[i], (unsigned long long)off,
             (unsigned long long)(off + sizes[i]));
    strcat(json, entry);
    off += sizes[i];
  }
  strcat(json, "}");
  write_file(name, json, off, seed, 0);
}

/// The bytes of entry e of placement p against the pattern of its file,
/// read back from its device.
static int placed_matches(ompx_safetensors_t c, ompx_safetensors_placement_t p,
                          size_t e) {
  ompx_safetensors_placed_t pl;
  ompx_safetensors_tensor_t ti;
  if (ompx_safetensors_placement_tensor(p, e, &pl) != 0 ||
      ompx_safetensors_tensor(c, pl.index, &ti) != 0 ||
      strcmp(pl.name, ti.name) != 0 || pl.nbytes != ti.nbytes ||
      (pl.device_ptr == NULL) != (ti.nbytes == 0))
    return 0;
  unsigned seed = ti.file == 0 ? 3 : 11;
  unsigned char *h = malloc(ti.nbytes + 1);
  if (ti.nbytes && omp_target_memcpy(h, pl.device_ptr, ti.nbytes, 0, 0,
                                     omp_get_initial_device(),
                                     pl.device_num) != 0)
    return 0;
  int ok = 1;
  for (uint64_t i = 0; i < ti.nbytes; ++i)
    ok &= h[i] == (unsigned char)((ti.data_begin + i) * 7 + seed);
  free(h);
  return ok;
}

/// Whether every entry of p arrived, each on a device of list (n), and the
/// bytes of any two listed devices differ by at most the largest tensor.
static int split_ok(ompx_safetensors_t c, ompx_safetensors_placement_t p,
                    const int *list, int n) {
  uint64_t sum[8] = {0}, largest = 0;
  int ok = 1;
  for (size_t e = 0; e < ompx_safetensors_placement_count(p); ++e) {
    ompx_safetensors_placed_t pl;
    ompx_safetensors_placement_tensor(p, e, &pl);
    int slot = -1;
    for (int d = 0; d < n; ++d)
      if (list[d] == pl.device_num)
        slot = d;
    ok &= slot >= 0 && placed_matches(c, p, e);
    if (slot >= 0)
      sum[slot] += pl.nbytes;
    largest = pl.nbytes > largest ? pl.nbytes : largest;
  }
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      ok &= sum[a] <= sum[b] + largest;
  return ok;
}

/// ename (offload_io_test.h) and the errno values of these calls it lacks.
static const char *errname(int e) {
  return e == ENOENT ? "ENOENT" : e == ENOMEM ? "ENOMEM" : ename(e);
}

/// A refused load: -1, errno err, *placement NULL; prints the message.
#define EXPECT_REFUSED(call, err, what)                                        \
  do {                                                                         \
    ompx_safetensors_placement_t p_ = (ompx_safetensors_placement_t)1;         \
    placement_out = &p_;                                                       \
    errno = 0;                                                                 \
    int r_ = (call);                                                           \
    int e_ = errno;                                                            \
    OT_EXPECT(r_ == -1 && e_ == (err) && p_ == NULL, "%s -> %d %s", what, r_, \
              errname(e_));                                                    \
    printf("  %s\n", ompx_io_last_error());                                    \
  } while (0)

static ompx_safetensors_placement_t *placement_out;

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  dir = argv[1];
  int host = omp_get_initial_device();
  int ndev = omp_get_num_devices() < 3 ? omp_get_num_devices() : 3;
  int devs[3] = {0, 1, 2};
  OT_EXPECT(ndev >= 1, "an offload device");

  // Two shards: ten tensors of mixed sizes (two of equal size, one empty),
  // and a third shard that the index leaves out.
  static const unsigned s1[] = {4096, 100, 3000, 3000, 0, 17};
  static const unsigned s2[] = {5000, 1, 2500, 64};
  write_shard("m-1.safetensors", "a", s1, 6, 3);
  write_shard("m-2.safetensors", "b", s2, 4, 11);
  write_text("model.safetensors.index.json",
             "{\"metadata\": {}, \"weight_map\": {\"a.0\": \"m-1.safetensors\", "
             "\"a.1\": \"m-1.safetensors\", \"a.2\": \"m-1.safetensors\", "
             "\"a.3\": \"m-1.safetensors\", \"a.4\": \"m-1.safetensors\", "
             "\"a.5\": \"m-1.safetensors\", \"b.0\": \"m-2.safetensors\", "
             "\"b.1\": \"m-2.safetensors\", \"b.2\": \"m-2.safetensors\", "
             "\"b.3\": \"m-2.safetensors\"}}");
  ompx_safetensors_t c = NULL;
  OT_EXPECT(ompx_safetensors_open(path("model.safetensors.index.json"), &c) ==
                0,
            "open a sharded checkpoint: %s", ompx_io_last_error());
  size_t n = ompx_safetensors_num_tensors(c);
  OT_EXPECT(n == 10 && ompx_safetensors_num_files(c) == 2, "10 tensors in 2 shards");

  // Every tensor, split evenly, in one call.
  ompx_safetensors_placement_t p = NULL;
  OT_EXPECT(ompx_safetensors_load_split(c, NULL, 0, devs, ndev, &p) == 0,
            "load a sharded checkpoint onto %s in one call: %s",
            ndev == 3 ? "devices 0,1,2" : "the devices", ompx_io_last_error());
  OT_EXPECT(ompx_safetensors_placement_count(p) == n, "every tensor placed");
  int in_order = 1;
  for (size_t e = 0; e < n; ++e) {
    ompx_safetensors_placed_t pl;
    in_order &= ompx_safetensors_placement_tensor(p, e, &pl) == 0 &&
                pl.index == e;
  }
  OT_EXPECT(in_order, "entries in the checkpoint's order");
  OT_EXPECT(split_ok(c, p, devs, ndev),
            "every byte on its device, balanced within the largest tensor");
  ompx_safetensors_placed_t big = {0}, empty = {0};
  ompx_safetensors_placement_tensor(p, ompx_safetensors_placement_find(p, "b.0"),
                                    &big);
  ompx_safetensors_placement_tensor(p, ompx_safetensors_placement_find(p, "a.4"),
                                    &empty);
  OT_EXPECT(big.nbytes == 5000 && big.device_num == 0 && big.device_ptr,
            "the largest tensor goes to the first device");
  OT_EXPECT(empty.nbytes == 0 && empty.device_ptr == NULL &&
                empty.device_num >= 0 && empty.device_num < ndev,
            "an empty tensor: a device, no memory");
  // The same request places the same way.
  ompx_safetensors_placement_t again = NULL;
  int same = ompx_safetensors_load_split(c, NULL, 0, devs, ndev, &again) == 0;
  for (size_t e = 0; same && e < n; ++e) {
    ompx_safetensors_placed_t x, y;
    ompx_safetensors_placement_tensor(p, e, &x);
    ompx_safetensors_placement_tensor(again, e, &y);
    same &= x.device_num == y.device_num &&
            (x.nbytes == 0 || x.device_ptr != y.device_ptr);
  }
  OT_EXPECT(same, "deterministic: the same split again, new memory");
  OT_EXPECT(ompx_safetensors_placement_free(again) == 0, "free a placement");

  // A subset by name, over the devices in reverse order.
  const char *some[] = {"b.2", "a.0", "a.5"};
  int rev[3] = {2, 1, 0};
  ompx_safetensors_placement_t q = NULL;
  OT_EXPECT(ompx_safetensors_load_split(c, some, 3, rev + 3 - ndev, ndev, &q) ==
                    0 &&
                ompx_safetensors_placement_count(q) == 3 &&
                split_ok(c, q, rev + 3 - ndev, ndev),
            "a subset by name: %s", ompx_io_last_error());
  ompx_safetensors_placed_t first = {0};
  ompx_safetensors_placement_tensor(q, 0, &first);
  OT_EXPECT(first.name && strcmp(first.name, "b.2") == 0 &&
                first.nbytes == 2500,
            "entries in the order of the names");
  ompx_safetensors_placement_free(q);

  // An explicit map: the initial device (host memory) takes tensors too.
  int map[10];
  for (size_t t = 0; t < n; ++t)
    map[t] = t % 4 == 3 ? host : (int)(t % ndev);
  ompx_safetensors_placement_t m = NULL;
  int mapped = ompx_safetensors_load_mapped(c, NULL, 0, map, &m) == 0;
  for (size_t e = 0; mapped && e < n; ++e) {
    ompx_safetensors_placed_t pl;
    ompx_safetensors_placement_tensor(m, e, &pl);
    mapped &= pl.device_num == map[e] && placed_matches(c, m, e);
  }
  OT_EXPECT(mapped, "an explicit map is respected, every byte: %s",
            ompx_io_last_error());
  ompx_safetensors_placement_free(m);
  const char *two[] = {"b.3", "a.2"};
  int two_map[] = {host, ndev - 1};
  OT_EXPECT(ompx_safetensors_load_mapped(c, two, 2, two_map, &m) == 0 &&
                placed_matches(c, m, 0) && placed_matches(c, m, 1),
            "a map of named tensors");
  ompx_safetensors_placement_free(m);

  // Refusals: nothing is placed.
  int missing[] = {0, 99};
  EXPECT_REFUSED(ompx_safetensors_load_split(c, NULL, 0, missing, 2,
                                             placement_out),
                 EINVAL, "split over a device that does not exist");
  int twice[] = {0, 0};
  EXPECT_REFUSED(ompx_safetensors_load_split(c, NULL, 0, twice, 2,
                                             placement_out),
                 EINVAL, "a device listed twice");
  int negative[] = {-3};
  EXPECT_REFUSED(ompx_safetensors_load_split(c, NULL, 0, negative, 1,
                                             placement_out),
                 EINVAL, "a negative device");
  EXPECT_REFUSED(ompx_safetensors_load_split(c, NULL, 0, devs, 0,
                                             placement_out),
                 EINVAL, "no devices");
  int bad_map[10];
  for (size_t t = 0; t < n; ++t)
    bad_map[t] = t == 7 ? 77 : 0;
  EXPECT_REFUSED(ompx_safetensors_load_mapped(c, NULL, 0, bad_map,
                                              placement_out),
                 EINVAL, "a map entry that is no device");
  EXPECT_REFUSED(ompx_safetensors_load_mapped(c, NULL, 0, NULL, placement_out),
                 EINVAL, "a NULL map");
  const char *unknown[] = {"a.0", "zz"};
  EXPECT_REFUSED(ompx_safetensors_load_split(c, unknown, 2, devs, ndev,
                                             placement_out),
                 ENOENT, "an unknown name");
  const char *repeated[] = {"a.1", "b.1", "a.1"};
  EXPECT_REFUSED(ompx_safetensors_load_split(c, repeated, 3, devs, ndev,
                                             placement_out),
                 EINVAL, "a name given twice");
  EXPECT_REFUSED(ompx_safetensors_load_split(c, NULL, 2, devs, ndev,
                                             placement_out),
                 EINVAL, "names NULL with nnames 2");
  EXPECT_REFUSED(ompx_safetensors_load_split(NULL, NULL, 0, devs, ndev,
                                             placement_out),
                 EINVAL, "checkpoint NULL");
  EXPECT_ERRNO(ompx_safetensors_load_split(c, NULL, 0, devs, ndev, NULL),
               EINVAL, "placement NULL");
  EXPECT_ERRNO(ompx_safetensors_placement_tensor(NULL, 0, &first), EINVAL,
               "placement_tensor NULL");
  EXPECT_ERRNO(ompx_safetensors_placement_tensor(p, n, &first), EINVAL,
               "placement_tensor out of range");
  EXPECT_ERRNO(ompx_safetensors_placement_find(p, "zz"), ENOENT,
               "placement_find unknown");
  EXPECT_ERRNO(ompx_safetensors_placement_free(NULL), EINVAL,
               "placement_free NULL");
  OT_EXPECT(ompx_safetensors_placement_count(NULL) == 0, "count of NULL");

  // A placement outlives its checkpoint.
  ompx_safetensors_t c2 = NULL;
  ompx_safetensors_placement_t kept = NULL;
  OT_EXPECT(ompx_safetensors_open(path("model.safetensors.index.json"), &c2) ==
                    0 &&
                ompx_safetensors_load_split(c2, NULL, 0, devs, ndev, &kept) == 0,
            "load another placement");
  ompx_safetensors_close(c2);
  ompx_safetensors_placed_t k = {0};
  OT_EXPECT(ompx_safetensors_placement_tensor(
                kept, ompx_safetensors_placement_find(kept, "b.2"), &k) == 0 &&
                k.name && strcmp(k.name, "b.2") == 0 && k.nbytes == 2500,
            "a placement outlives its checkpoint");
  ompx_safetensors_placement_free(kept);

  // A device allocation that fails: the last tensor, 8 TiB in a sparse
  // file, after two small ones on other devices. Only where an allocation
  // that large fails (the kernel's overcommit heuristic refuses it), and
  // not under a sanitizer, whose allocator stops the process instead.
  write_file("huge.safetensors",
             "{\"s.0\": {\"dtype\": \"U8\", \"shape\": [64], \"data_offsets\": "
             "[0, 64]}, \"s.1\": {\"dtype\": \"U8\", \"shape\": [64], "
             "\"data_offsets\": [64, 128]}, \"huge\": {\"dtype\": \"U8\", "
             "\"shape\": [8796093022208], \"data_offsets\": [128, "
             "8796093022336]}}",
             128, 0, 8796093022336ull);
  char mode = '?';
  FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
  if (f) {
    mode = (char)fgetc(f);
    fclose(f);
  }
  ompx_safetensors_t h = NULL;
  OT_EXPECT(ompx_safetensors_open(path("huge.safetensors"), &h) == 0,
            "open a file with a tensor of 8 TiB: %s", ompx_io_last_error());
  int huge_map[] = {0, ndev > 1 ? 1 : 0, ndev - 1};
  int sanitized = dlsym(RTLD_DEFAULT, "__asan_init") ||
                  dlsym(RTLD_DEFAULT, "__tsan_init") ||
                  dlsym(RTLD_DEFAULT, "__msan_init");
  if ((mode == '0' || mode == '2') && !sanitized)
    EXPECT_REFUSED(ompx_safetensors_load_mapped(h, NULL, 0, huge_map,
                                                placement_out),
                   ENOMEM, "ENOMEM: a device allocation fails");
  else {
    OT_EXPECT(1, "ENOMEM: a device allocation fails");
    printf("  skipped: %s\n", sanitized ? "a sanitizer runtime is loaded"
                                         : "vm.overcommit_memory is not 0 or 2");
  }
  ompx_safetensors_close(h);

  // A file cut after open: the load fails, nothing is kept.
  ompx_safetensors_t cut = NULL;
  write_shard("cut.safetensors", "c", s2, 4, 11);
  OT_EXPECT(ompx_safetensors_open(path("cut.safetensors"), &cut) == 0,
            "open a file to cut");
  // Inside the first tensor: four of its bytes are left.
  if (truncate(path("cut.safetensors"),
               8 + ompx_safetensors_header_bytes(cut, 0) + 4) != 0)
    abort();
  EXPECT_REFUSED(ompx_safetensors_load_split(cut, NULL, 0, devs, ndev,
                                             placement_out),
                 EIO, "a file cut after open: EIO");
  ompx_safetensors_close(cut);

  OT_EXPECT(ompx_safetensors_placement_free(p) == 0, "free");
  ompx_safetensors_close(c);
  OT_SUMMARY();
  return ot_failures != 0;
}

// CHECK: PASS: an offload device
// CHECK: PASS: load a sharded checkpoint onto {{.*}} in one call
// CHECK: PASS: every tensor placed
// CHECK: PASS: entries in the checkpoint's order
// CHECK: PASS: every byte on its device, balanced within the largest tensor
// CHECK: PASS: the largest tensor goes to the first device
// CHECK: PASS: an empty tensor: a device, no memory
// CHECK: PASS: deterministic: the same split again, new memory
// CHECK: PASS: a subset by name
// CHECK: PASS: entries in the order of the names
// CHECK: PASS: an explicit map is respected, every byte
// CHECK: PASS: a map of named tensors
// CHECK: PASS: split over a device that does not exist -> -1 EINVAL
// CHECK-NEXT: ompx_safetensors_load_split: devices[1]: device 99 does not exist ({{[0-9]+}} devices; the initial device is {{[0-9]+}})
// CHECK: PASS: a device listed twice -> -1 EINVAL
// CHECK-NEXT: ompx_safetensors_load_split: devices[1]: device 0 is in the list twice
// CHECK: PASS: a negative device -> -1 EINVAL
// CHECK: PASS: no devices -> -1 EINVAL
// CHECK-NEXT: ompx_safetensors_load_split: the list of devices is empty
// CHECK: PASS: a map entry that is no device -> -1 EINVAL
// CHECK-NEXT: ompx_safetensors_load_mapped: device_map[7]: tensor 'b.1' of {{.*}}m-2.safetensors: device 77 does not exist
// CHECK: PASS: a NULL map -> -1 EINVAL
// CHECK: PASS: an unknown name -> -1 ENOENT
// CHECK-NEXT: ompx_safetensors_load_split: names[1]: tensor 'zz': not in the checkpoint
// CHECK: PASS: a name given twice -> -1 EINVAL
// CHECK-NEXT: ompx_safetensors_load_split: names[2]: tensor 'a.1' of {{.*}}m-1.safetensors is named twice
// CHECK: PASS: names NULL with nnames 2 -> -1 EINVAL
// CHECK: PASS: checkpoint NULL -> -1 EINVAL
// CHECK: PASS: placement NULL
// CHECK: PASS: placement_tensor NULL
// CHECK: PASS: placement_tensor out of range
// CHECK: PASS: placement_find unknown
// CHECK: PASS: placement_free NULL
// CHECK: PASS: count of NULL
// CHECK: PASS: a placement outlives its checkpoint
// CHECK: PASS: open a file with a tensor of 8 TiB
// CHECK: PASS: ENOMEM: a device allocation fails
// CHECK-NEXT: {{(ompx_safetensors_load_mapped: tensor 'huge' of .*huge.safetensors: omp_target_alloc\(8796093022208 bytes, device [0-9]+\) returned NULL; the 2 allocations made before it were freed|skipped: .*)}}
// CHECK: PASS: a file cut after open: EIO -> -1 EIO
// CHECK-NEXT: ompx_safetensors_load_split: 4 of 4 tensors failed: entry 0: tensor 'c.0' of {{.*}}cut.safetensors (5000 bytes at offset {{[0-9]+}} into device {{[0-9]+}}): the file ends after 4 of its bytes
// CHECK-NOT: FAIL
// CHECK: failures: 0
