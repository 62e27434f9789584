// The safetensors C API (ompx_safetensors.h) through our plugin: a file of
// every dtype with metadata, opened, listed and loaded in one call into
// buffers of the default device and of the initial device, checked byte for
// byte; a sharded checkpoint through its model.safetensors.index.json; and
// the refusals: NULL arguments, a missing file, hostile headers (over the
// length limit, nested too deep, overlapping, out of the file, size
// mismatch), hostile indexes (a shard outside the directory, a tensor not
// in its shard, no weight_map), and per-entry load errors (an unknown name,
// a small buffer, a file truncated after open) while the other entries
// still load.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: rm -rf %t.d && mkdir -p %t.d
// RUN: %libomptarget-run-generic %t.d | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic %t.d | %fcheck-generic

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

/// Write a safetensors file: header text json, then data bytes i*13+seed.
static void write_file(const char *name, const char *json, size_t data,
                       unsigned seed) {
  int fd = open(path(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  uint64_t n = strlen(json);
  unsigned char len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = (unsigned char)(n >> (8 * i));
  if (write(fd, len, 8) != 8 || write(fd, json, n) != (ssize_t)n)
    abort();
  for (size_t i = 0; i < data; ++i) {
    unsigned char b = (unsigned char)(i * 13 + seed);
    if (write(fd, &b, 1) != 1)
      abort();
  }
  close(fd);
}

static void write_text(const char *name, const char *text) {
  int fd = open(path(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
    abort();
  close(fd);
}

static int open_errno(const char *name) {
  ompx_safetensors_t c = (ompx_safetensors_t)1;
  errno = 0;
  int r = ompx_safetensors_open(path(name), &c);
  int e = errno;
  if (r == 0) {
    ompx_safetensors_close(c);
    return 0;
  }
  printf("  %s: %s\n",
         e == EOVERFLOW ? "EOVERFLOW" : e == ENOENT ? "ENOENT" : ename(e),
         ompx_io_last_error());
  return c == NULL ? e : -1;
}

/// The bytes of tensor t of c, read back from device dev, against the file
/// pattern of its file (seed).
static int matches(ompx_safetensors_t c, size_t t, void *buf, int dev,
                   unsigned seed) {
  ompx_safetensors_tensor_t ti;
  if (ompx_safetensors_tensor(c, t, &ti) != 0)
    return 0;
  unsigned char *h = malloc(ti.nbytes + 1);
  if (ti.nbytes && omp_target_memcpy(h, buf, ti.nbytes, 0, 0,
                                     omp_get_initial_device(), dev) != 0)
    return 0;
  int ok = 1;
  for (uint64_t i = 0; i < ti.nbytes; ++i)
    ok &= h[i] == (unsigned char)((ti.data_begin + i) * 13 + seed);
  free(h);
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  dir = argv[1];
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();

  // Every dtype, back to back, one with shape [] and one empty.
  static const char *names[] = {"BOOL", "U8",  "I8",  "F8_E4M3", "F8_E5M2",
                                "I16",  "U16", "F16", "BF16",    "I32",
                                "U32",  "F32", "F64", "I64",     "U64"};
  char json[4096] = "{\"__metadata__\": {\"format\": \"pt\", \"b\": \"2\"}";
  uint64_t off = 0;
  for (int d = 0; d < OMPX_SAFETENSORS_NUM_DTYPES; ++d) {
    uint64_t dims = d == 1 ? 0 : 3;
    uint64_t bytes = ompx_safetensors_dtype_size(d) * (d == 2 ? 1 : dims * 2);
    char entry[256];
    snprintf(entry, sizeof entry,
             ", \"t_%s\": {\"dtype\": \"%s\", \"shape\": %s, "
             "\"data_offsets\": [%llu, %llu]}",
             names[d], names[d],
             d == 2 ? "[]" : d == 1 ? "[0, 2]" : "[3, 2]",
             (unsigned long long)off, (unsigned long long)(off + bytes));
    strcat(json, entry);
    off += bytes;
  }
  strcat(json, "}");
  write_file("all.safetensors", json, off, 1);

  for (int d = 0; d < OMPX_SAFETENSORS_NUM_DTYPES; ++d)
    OT_EXPECT(strcmp(ompx_safetensors_dtype_name(d), names[d]) == 0,
              "dtype %d is %s", d, names[d]);
  OT_EXPECT(ompx_safetensors_dtype_name(15) == NULL &&
                ompx_safetensors_dtype_size(-1) == 0,
            "unknown dtype numbers");

  ompx_safetensors_t c = NULL;
  OT_EXPECT(ompx_safetensors_open(path("all.safetensors"), &c) == 0,
            "open a file of every dtype: %s", ompx_io_last_error());
  OT_EXPECT(ompx_safetensors_num_tensors(c) == 15 &&
                ompx_safetensors_num_files(c) == 1,
            "15 tensors in 1 file");
  const char *k, *v;
  OT_EXPECT(ompx_safetensors_num_metadata(c, 0) == 2 &&
                ompx_safetensors_metadata(c, 0, 0, &k, &v) == 0 &&
                strcmp(k, "b") == 0 && strcmp(v, "2") == 0,
            "metadata sorted by key");
  ompx_safetensors_tensor_t ti;
  ssize_t bf16 = ompx_safetensors_find(c, "t_BF16");
  OT_EXPECT(bf16 >= 0 && ompx_safetensors_tensor(c, bf16, &ti) == 0 &&
                ti.dtype == OMPX_SAFETENSORS_BF16 && ti.ndim == 2 &&
                ti.shape[0] == 3 && ti.shape[1] == 2 && ti.nbytes == 12 &&
                ti.file_offset ==
                    8 + (uint64_t)ompx_safetensors_header_bytes(c, 0) +
                        ti.data_begin,
            "find and describe t_BF16");
  ssize_t i8 = ompx_safetensors_find(c, "t_I8");
  OT_EXPECT(i8 >= 0 && ompx_safetensors_tensor(c, i8, &ti) == 0 &&
                ti.ndim == 0 && ti.nbytes == 1,
            "a scalar: shape []");

  // Every tensor in one call: even ones into the device, odd ones into
  // host memory (the initial device).
  ompx_safetensors_load_t loads[15];
  void *bufs[15];
  memset(loads, 0, sizeof loads);
  for (size_t t = 0; t < 15; ++t) {
    ompx_safetensors_tensor(c, t, &ti);
    int d = t % 2 ? host : dev;
    bufs[t] = ti.nbytes ? omp_target_alloc(ti.nbytes, d) : NULL;
    loads[t].name = ti.name;
    loads[t].device_buf = bufs[t];
    loads[t].buf_size = ti.nbytes;
    loads[t].device_num = d;
  }
  OT_EXPECT(ompx_safetensors_load(c, loads, 15) == 0,
            "load 15 tensors into two devices in one call: %s",
            ompx_io_last_error());
  int all = 1;
  for (size_t t = 0; t < 15; ++t) {
    ompx_safetensors_tensor(c, t, &ti);
    all &= loads[t].result == (ssize_t)ti.nbytes && loads[t].error == 0 &&
           matches(c, t, bufs[t], t % 2 ? host : dev, 1);
  }
  OT_EXPECT(all, "every byte of every dtype arrived");

  // Per-entry errors; the good entry still loads.
  ompx_safetensors_load_t bad[4];
  memset(bad, 0, sizeof bad);
  bad[0].name = "no such tensor";
  bad[1].name = "t_F64";
  bad[1].device_buf = bufs[12];
  bad[1].buf_size = 8;
  bad[1].device_num = dev;
  bad[2].name = NULL;
  bad[2].index = 99;
  bad[3].index = bf16;
  bad[3].device_buf = bufs[bf16];
  bad[3].buf_size = 12;
  bad[3].device_num = bf16 % 2 ? host : dev;
  ssize_t failed = ompx_safetensors_load(c, bad, 4);
  OT_EXPECT(failed == 3 && bad[0].error == ENOENT && bad[1].error == EINVAL &&
                bad[2].error == EINVAL && bad[3].error == 0 &&
                bad[3].result == 12,
            "per-entry errors: ENOENT, EINVAL (small buffer), EINVAL "
            "(index), one loads");
  printf("  %s\n", ompx_io_last_error());
  OT_EXPECT(strstr(ompx_io_last_error(), "tensor 't_F64' of ") != NULL,
            "the message names the tensor and its file");
  EXPECT_ERRNO(ompx_safetensors_find(c, "nope"), ENOENT, "find unknown");
  EXPECT_ERRNO(ompx_safetensors_find(c, NULL), EINVAL, "find NULL");
  EXPECT_ERRNO(ompx_safetensors_tensor(c, 15, &ti), EINVAL, "tensor 15");
  EXPECT_ERRNO(ompx_safetensors_load(NULL, loads, 1), EINVAL, "load NULL");
  EXPECT_ERRNO(ompx_safetensors_load(c, NULL, 1), EINVAL, "loads NULL");
  OT_EXPECT(ompx_safetensors_load(c, NULL, 0) == 0, "load nothing");

  // A file truncated after open: the tensors past the end fail with EIO.
  ompx_safetensors_t t2 = NULL;
  write_file("cut.safetensors", json, off, 1);
  OT_EXPECT(ompx_safetensors_open(path("cut.safetensors"), &t2) == 0,
            "open a file to truncate");
  ompx_safetensors_tensor(t2, 14, &ti);
  if (truncate(path("cut.safetensors"), (off_t)ti.file_offset + 1) != 0)
    abort();
  // bufs[14] is memory of device dev (even tensors live there).
  ompx_safetensors_load_t last = {ti.name, 0, bufs[14], ti.nbytes, dev, 0, 0};
  OT_EXPECT(ompx_safetensors_load(t2, &last, 1) == 1 && last.error == EIO,
            "a file cut after open: EIO (%s)", ename(last.error));
  ompx_safetensors_close(t2);
  EXPECT_ERRNO(ompx_safetensors_close(NULL), EINVAL, "close NULL");

  // A sharded checkpoint: two shards, the index names three tensors.
  write_file("s-1.safetensors",
             "{\"a\": {\"dtype\": \"F32\", \"shape\": [4], "
             "\"data_offsets\": [0, 16]}, \"x\": {\"dtype\": \"U8\", "
             "\"shape\": [2], \"data_offsets\": [16, 18]}}",
             18, 5);
  write_file("s-2.safetensors",
             "{\"__metadata__\": {\"format\": \"pt\"}, \"b\": {\"dtype\": "
             "\"BF16\", \"shape\": [2, 2], \"data_offsets\": [0, 8]}, \"c\": "
             "{\"dtype\": \"F8_E4M3\", \"shape\": [3], \"data_offsets\": "
             "[8, 11]}}",
             11, 9);
  write_text("model.safetensors.index.json",
             "{\"metadata\": {\"total_size\": 27}, \"weight_map\": {\"c\": "
             "\"s-2.safetensors\", \"a\": \"s-1.safetensors\", \"b\": "
             "\"s-2.safetensors\"}}");
  ompx_safetensors_t s = NULL;
  OT_EXPECT(ompx_safetensors_open(path("model.safetensors.index.json"), &s) ==
                0,
            "open a sharded checkpoint: %s", ompx_io_last_error());
  OT_EXPECT(ompx_safetensors_num_files(s) == 2 &&
                ompx_safetensors_num_tensors(s) == 3,
            "2 shards, 3 tensors of the weight map");
  OT_EXPECT(strstr(ompx_safetensors_file_path(s, 1), "/s-2.safetensors") != NULL,
            "shards in the index's directory, by name");
  ompx_safetensors_load_t sl[3];
  void *sb[3];
  memset(sl, 0, sizeof sl);
  for (size_t t = 0; t < 3; ++t) {
    ompx_safetensors_tensor(s, t, &ti);
    sb[t] = omp_target_alloc(ti.nbytes, dev);
    sl[t].name = ti.name;
    sl[t].device_buf = sb[t];
    sl[t].buf_size = ti.nbytes;
    sl[t].device_num = dev;
  }
  OT_EXPECT(ompx_safetensors_load(s, sl, 3) == 0, "load both shards in one call");
  ompx_safetensors_tensor(s, 0, &ti);
  int shard_ok = ti.file == 0 && matches(s, 0, sb[0], dev, 5);
  for (size_t t = 1; t < 3; ++t) {
    ompx_safetensors_tensor(s, t, &ti);
    shard_ok &= ti.file == 1 && matches(s, t, sb[t], dev, 9);
  }
  OT_EXPECT(shard_ok, "every byte of both shards arrived");
  OT_EXPECT(ompx_safetensors_find(s, "x") == -1, "a shard's tensor that the "
            "map does not name is not listed");
  ompx_safetensors_close(s);

  // Refusals at open.
  EXPECT_ERRNO(ompx_safetensors_open(NULL, &s), EINVAL, "open NULL path");
  EXPECT_ERRNO(ompx_safetensors_open(path("all.safetensors"), NULL), EINVAL,
               "open NULL checkpoint");
  OT_EXPECT(open_errno("missing.safetensors") == ENOENT, "missing: ENOENT");
  {
    int fd = open(path("huge.safetensors"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    unsigned char len[8] = {0, 0, 0, 0, 0, 1, 0, 0}; // 2^40
    if (write(fd, len, 8) != 8 || write(fd, "{}", 2) != 2)
      abort();
    close(fd);
  }
  OT_EXPECT(open_errno("huge.safetensors") == EOVERFLOW,
            "header over the limit: EOVERFLOW");
  {
    char deep[600] = "{\"a\": ";
    for (int i = 0; i < 200; ++i)
      strcat(deep, "[");
    for (int i = 0; i < 200; ++i)
      strcat(deep, "]");
    strcat(deep, "}");
    write_file("deep.safetensors", deep, 0, 0);
  }
  OT_EXPECT(open_errno("deep.safetensors") == EOVERFLOW,
            "nesting over the limit: EOVERFLOW");
  write_file("overlap.safetensors",
             "{\"a\": {\"dtype\": \"U8\", \"shape\": [4], \"data_offsets\": "
             "[0, 4]}, \"b\": {\"dtype\": \"U8\", \"shape\": [4], "
             "\"data_offsets\": [2, 6]}}",
             8, 0);
  OT_EXPECT(open_errno("overlap.safetensors") == EINVAL, "overlap: EINVAL");
  write_file("outside.safetensors",
             "{\"a\": {\"dtype\": \"U8\", \"shape\": [9], \"data_offsets\": "
             "[0, 9]}}",
             8, 0);
  OT_EXPECT(open_errno("outside.safetensors") == EINVAL,
            "offsets out of the file: EINVAL");
  write_file("mismatch.safetensors",
             "{\"a\": {\"dtype\": \"F16\", \"shape\": [3], \"data_offsets\": "
             "[0, 4]}}",
             8, 0);
  OT_EXPECT(open_errno("mismatch.safetensors") == EINVAL,
            "dtype/shape/size mismatch: EINVAL");
  write_text("abs.index.json",
             "{\"weight_map\": {\"a\": \"/etc/passwd\"}}");
  OT_EXPECT(open_errno("abs.index.json") == EINVAL, "absolute shard: EINVAL");
  write_text("up.index.json",
             "{\"weight_map\": {\"a\": \"../s-1.safetensors\"}}");
  OT_EXPECT(open_errno("up.index.json") == EINVAL, "shard with '..': EINVAL");
  write_text("lost.index.json",
             "{\"weight_map\": {\"zz\": \"s-1.safetensors\"}}");
  OT_EXPECT(open_errno("lost.index.json") == EINVAL,
            "a tensor not in its shard: EINVAL");
  write_text("nomap.index.json", "{\"metadata\": {}}");
  OT_EXPECT(open_errno("nomap.index.json") == EINVAL, "no weight_map: EINVAL");
  write_text("gone.index.json",
             "{\"weight_map\": {\"a\": \"gone.safetensors\"}}");
  OT_EXPECT(open_errno("gone.index.json") == ENOENT, "a missing shard: ENOENT");

  for (size_t t = 0; t < 15; ++t)
    if (bufs[t])
      omp_target_free(bufs[t], t % 2 ? host : dev);
  for (size_t t = 0; t < 3; ++t)
    omp_target_free(sb[t], dev);
  ompx_safetensors_close(c);
  OT_SUMMARY();
  return ot_failures != 0;
}

// CHECK: PASS: open a file of every dtype
// CHECK: PASS: load 15 tensors into two devices in one call
// CHECK: PASS: every byte of every dtype arrived
// CHECK: PASS: per-entry errors
// CHECK: ompx_safetensors_load: 3 of 4 tensors failed: entry 0: tensor 'no such tensor': not in the checkpoint; entry 1: tensor 't_F64' of {{.*}}all.safetensors: 48 bytes, but the buffer holds 8; entry 2: tensor number 99: out of range (15 tensors)
// CHECK: PASS: a file cut after open: EIO
// CHECK: PASS: every byte of both shards arrived
// CHECK: EOVERFLOW: ompx_safetensors_open: {{.*}}huge.safetensors: safetensors header: header length 1099511627776 is over the limit of 104857600 bytes
// CHECK: EOVERFLOW: ompx_safetensors_open: {{.*}}deep.safetensors: safetensors header: arrays and objects nested more than 128 levels deep
// CHECK: EINVAL: ompx_safetensors_open: {{.*}}overlap.safetensors: safetensors header: tensor 'b': data_offsets [2, 6) overlap tensor 'a' at [0, 4)
// CHECK: EINVAL: ompx_safetensors_open: {{.*}}abs.index.json: safetensors index: tensor 'a': shard '/etc/passwd' is not a file name inside
// CHECK: EINVAL: ompx_safetensors_open: {{.*}}lost.index.json: safetensors index: tensor 'zz' is not in shard {{.*}}s-1.safetensors
// CHECK-NOT: FAIL
// CHECK: failures: 0
