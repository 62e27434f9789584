// SPDX-License-Identifier: Apache-2.0
//
// Checkpoint save and load through the file engine, against what programs
// write today, in one run:
//   save: plain pwrite of the checkpoint's bytes from host memory, then one
//         ompx_io batch writing the header (host memory) and every tensor
//         (device memory); the ratio batch / pwrite.
//   load from the page cache (the file read once before), three ways into
//         device memory: (a) per tensor, pread into a malloc buffer then
//         omp_target_memcpy; (b) per tensor, ompx_target_pread; (c) one
//         batch of every tensor. Ratios against (a).
//   --odirect: the same three loads from disk through an O_DIRECT
//         descriptor, beside the disk's own O_DIRECT read rate of the same
//         file into aligned host memory (THREADS readers, 32 MiB requests);
//         ratios against (a) and against the disk.
// The checkpoint is a safetensors file of about 2,000 F32 tensors: 4 of 384
// MiB, medium ones of 4-64 MiB filling most of the total, 1,800 of 4-64
// KiB; --total scales every size class (a 4 KiB floor; every size a
// multiple of 4 KiB and the data section 4 KiB-aligned, so that O_DIRECT
// serves every tensor). Each way runs --repeat times and keeps its best;
// device buffers are cleared before each run and checked byte by byte
// after it (--no-verify skips that). Prints a table, one "CKPT key=value"
// line per measurement and a RESULT line; asserts nothing but correctness.
//
// Usage: checkpoint-bench [--file PATH] [--total SIZE] [--device D]
//                         [--repeat N] [--threads T] [--odirect] [--keep]
//                         [--no-verify]
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-util.h"
#include "ompx_io.h"

enum { Align = 4096, DiskRequest = 32 << 20, MaxRows = 16 };

struct TensorTy {
  uint64_t Offset; ///< In the file.
  uint64_t Bytes;
  char *Dev;
};

struct CheckpointTy {
  struct TensorTy *Tensors;
  int Count;
  uint64_t DataBytes;
  uint64_t DataOffset; ///< 8 + header length, a multiple of Align.
  char *Prefix;        ///< The first DataOffset bytes of the file.
  char *Mirror;        ///< The data section in host memory.
  uint64_t MaxBytes;
};

struct OptionsTy {
  const char *Path;
  uint64_t Total;
  int Device, Repeat, Threads, ODirect, Keep, Verify;
};

struct RowTy {
  const char *Phase, *Source, *Method, *Key;
  double GBps, Seconds, Ratio, DiskRatio;
};

static struct RowTy Rows[MaxRows];
static int NumRows;

static void die(const char *What) { benchDie("checkpoint-bench", What); }

static uint64_t parseSize(const char *Text) {
  char *End;
  errno = 0;
  unsigned long long V = strtoull(Text, &End, 10);
  uint64_t Scale = *End == 'K' ? 1ull << 10 : *End == 'M' ? 1ull << 20
                 : *End == 'G' ? 1ull << 30 : 1;
  if (errno || End == Text || (Scale > 1 && End[1]) || (Scale == 1 && *End)) {
    fprintf(stderr, "checkpoint-bench: not a size: '%s'\n", Text);
    exit(2);
  }
  return (uint64_t)V * Scale;
}

static uint64_t roundUp(uint64_t V) { return (V + Align - 1) / Align * Align; }

/// Size of class member scaled to the total, on the 4 KiB grid.
static uint64_t scaled(uint64_t Bytes, double Scale) {
  uint64_t V = roundUp((uint64_t)((double)Bytes * Scale));
  return V < Align ? Align : V;
}

static void addTensor(struct CheckpointTy *C, uint64_t Bytes) {
  C->Tensors = realloc(C->Tensors, sizeof(*C->Tensors) * (C->Count + 1));
  if (!C->Tensors)
    die("realloc");
  C->Tensors[C->Count++] = (struct TensorTy){C->DataBytes, Bytes, NULL};
  C->DataBytes += Bytes;
  if (Bytes > C->MaxBytes)
    C->MaxBytes = Bytes;
}

/// The size mix, then the safetensors header padded with spaces to the
/// 4 KiB grid, and the data in host memory.
static void planCheckpoint(struct CheckpointTy *C, uint64_t Total) {
  const double Scale = (double)Total / (double)(8ull << 30);
  uint64_t Seed = 0x5eed;
  memset(C, 0, sizeof(*C));
  for (int I = 0; I < 4; ++I)
    addTensor(C, scaled(384ull << 20, Scale));
  uint64_t SmallBytes = 0, Small[1800];
  for (int I = 0; I < 1800; ++I)
    SmallBytes += Small[I] = scaled((4 + benchMix(++Seed) % 61) << 10, Scale);
  uint64_t MediumTarget = Total > C->DataBytes + SmallBytes
                              ? Total - C->DataBytes - SmallBytes : 0;
  for (uint64_t Medium = 0; Medium < MediumTarget;) {
    uint64_t Bytes = scaled((4 + benchMix(++Seed) % 61) << 20, Scale);
    if (Bytes > MediumTarget - Medium)
      Bytes = roundUp(MediumTarget - Medium);
    addTensor(C, Bytes);
    Medium += Bytes;
  }
  for (int I = 0; I < 1800; ++I)
    addTensor(C, Small[I]);

  size_t Cap = 256 + (size_t)C->Count * 96, Len = 0;
  char *Json = malloc(Cap);
  if (!Json)
    die("malloc");
  Len += snprintf(Json, Cap, "{\"__metadata__\":{\"format\":\"pt\"}");
  for (int I = 0; I < C->Count; ++I)
    Len += snprintf(Json + Len, Cap - Len,
                    ",\"tensor.%04d\":{\"dtype\":\"F32\",\"shape\":[%llu],"
                    "\"data_offsets\":[%llu,%llu]}",
                    I, (unsigned long long)(C->Tensors[I].Bytes / 4),
                    (unsigned long long)C->Tensors[I].Offset,
                    (unsigned long long)(C->Tensors[I].Offset +
                                         C->Tensors[I].Bytes));
  Len += snprintf(Json + Len, Cap - Len, "}");
  C->DataOffset = roundUp(8 + Len);
  C->Prefix = aligned_alloc(Align, C->DataOffset);
  if (!C->Prefix)
    die("aligned_alloc of the header");
  uint64_t HeaderLength = C->DataOffset - 8;
  for (int B = 0; B < 8; ++B)
    C->Prefix[B] = (char)(HeaderLength >> (8 * B));
  memcpy(C->Prefix + 8, Json, Len);
  memset(C->Prefix + 8 + Len, ' ', HeaderLength - Len);
  free(Json);
  for (int I = 0; I < C->Count; ++I)
    C->Tensors[I].Offset += C->DataOffset;

  C->Mirror = aligned_alloc(Align, C->DataBytes);
  if (!C->Mirror)
    die("aligned_alloc of the host copy");
  uint64_t *Words = (uint64_t *)C->Mirror;
#pragma omp parallel for schedule(static)
  for (uint64_t W = 0; W < C->DataBytes / 8; ++W)
    Words[W] = benchMix(W + 1);
}

static void clearDevice(struct CheckpointTy *C, int Dev) {
  for (int I = 0; I < C->Count; ++I) {
    char *P = C->Tensors[I].Dev;
    uint64_t N = C->Tensors[I].Bytes;
#pragma omp target teams distribute parallel for is_device_ptr(P) device(Dev)
    for (uint64_t B = 0; B < N; ++B)
      P[B] = 0;
  }
}

static void verifyDevice(struct CheckpointTy *C, int Dev, const char *What) {
  char *Back = malloc(C->MaxBytes);
  if (!Back)
    die("malloc of the verify buffer");
  for (int I = 0; I < C->Count; ++I) {
    struct TensorTy *T = &C->Tensors[I];
    if (omp_target_memcpy(Back, T->Dev, T->Bytes, 0, 0,
                          omp_get_initial_device(), Dev))
      die("omp_target_memcpy back to the host");
    if (memcmp(Back, C->Mirror + (T->Offset - C->DataOffset), T->Bytes)) {
      fprintf(stderr, "checkpoint-bench: %s: tensor %d (%llu bytes at offset "
              "%llu) differs from what was saved\n", What, I,
              (unsigned long long)T->Bytes, (unsigned long long)T->Offset);
      exit(1);
    }
  }
  free(Back);
}

static void preadFull(int Fd, char *Buf, uint64_t Size, uint64_t Offset) {
  for (uint64_t Done = 0; Done < Size;) {
    ssize_t N = pread(Fd, Buf + Done, Size - Done, (off_t)(Offset + Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      die("pread");
    Done += (uint64_t)N;
  }
}

static void pwriteFull(int Fd, const char *Buf, uint64_t Size, uint64_t Offset) {
  for (uint64_t Done = 0; Done < Size;) {
    ssize_t N = pwrite(Fd, Buf + Done, Size - Done, (off_t)(Offset + Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      die("pwrite");
    Done += (uint64_t)N;
  }
}

/// One batch over every tensor (and, for saves, the header from host
/// memory); every operation must transfer its full count.
static void runBatch(struct CheckpointTy *C, int Fd, int Opcode, int Dev) {
  int N = C->Count + (Opcode == OMPX_IO_OP_WRITE);
  ompx_io_op_t *Ops = calloc((size_t)N, sizeof(*Ops));
  if (!Ops)
    die("calloc of the batch");
  int K = 0;
  if (Opcode == OMPX_IO_OP_WRITE)
    Ops[K++] = (ompx_io_op_t){OMPX_IO_OP_WRITE, Fd, C->Prefix, C->DataOffset,
                              0, omp_get_initial_device(), 0, 0};
  for (int I = 0; I < C->Count; ++I)
    Ops[K++] = (ompx_io_op_t){Opcode, Fd, C->Tensors[I].Dev,
                              C->Tensors[I].Bytes,
                              (off_t)C->Tensors[I].Offset, Dev, 0, 0};
  ompx_io_batch_t Batch;
  if (ompx_io_batch_submit(Ops, (size_t)N, &Batch) != 0 ||
      ompx_io_batch_wait(Batch) != 0) {
    fprintf(stderr, "checkpoint-bench: batch of %d: %s\n", N,
            ompx_io_last_error());
    exit(1);
  }
  for (int I = 0; I < N; ++I)
    if (Ops[I].result != (ssize_t)Ops[I].count) {
      errno = Ops[I].error;
      die("batch operation short or failed");
    }
  free(Ops);
}

enum MethodTy { SavePwrite, SaveBatch, LoadMemcpy, LoadPread, LoadBatch,
                DiskRead };

static const char *MethodNames[] = {
    "pwrite from host memory",  "one batch from device memory",
    "(a) pread + omp_target_memcpy", "(b) ompx_target_pread per tensor",
    "(c) one batch",            "disk: O_DIRECT pread, host memory"};
static const char *MethodKeys[] = {"pwrite", "batch", "pread_memcpy",
                                   "ompx_pread", "batch", "disk"};

/// One timed run of Method; returns seconds.
static double runOnce(struct CheckpointTy *C, const struct OptionsTy *O,
                      enum MethodTy Method, int Direct) {
  int Dev = O->Device;
  int Save = Method == SavePwrite || Method == SaveBatch;
  int Flags = Save ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY;
  int Fd = open(O->Path, Flags | (Direct ? O_DIRECT : 0), 0644);
  if (Fd < 0)
    die(O->Path);
  if (Direct)
    posix_fadvise(Fd, 0, 0, POSIX_FADV_DONTNEED);
  if (!Save && Method != DiskRead)
    clearDevice(C, Dev);
  char *Host = NULL;
  double T0 = benchNow();
  switch (Method) {
  case SavePwrite:
    pwriteFull(Fd, C->Prefix, C->DataOffset, 0);
    for (int I = 0; I < C->Count; ++I)
      pwriteFull(Fd, C->Mirror + (C->Tensors[I].Offset - C->DataOffset),
                 C->Tensors[I].Bytes, C->Tensors[I].Offset);
    break;
  case SaveBatch:
    runBatch(C, Fd, OMPX_IO_OP_WRITE, Dev);
    break;
  case LoadMemcpy:
    // What programs write today: one host buffer for the largest tensor,
    // reused (aligned only where O_DIRECT needs it).
    Host = Direct ? aligned_alloc(Align, C->MaxBytes) : malloc(C->MaxBytes);
    if (!Host)
      die("malloc of the host buffer");
    for (int I = 0; I < C->Count; ++I) {
      preadFull(Fd, Host, C->Tensors[I].Bytes, C->Tensors[I].Offset);
      if (omp_target_memcpy(C->Tensors[I].Dev, Host, C->Tensors[I].Bytes, 0, 0,
                            Dev, omp_get_initial_device()))
        die("omp_target_memcpy to the device");
    }
    break;
  case LoadPread:
    for (int I = 0; I < C->Count; ++I)
      if (ompx_target_pread(Fd, C->Tensors[I].Dev, C->Tensors[I].Bytes,
                            (off_t)C->Tensors[I].Offset, Dev) !=
          (ssize_t)C->Tensors[I].Bytes) {
        fprintf(stderr, "checkpoint-bench: ompx_target_pread: %s\n",
                ompx_io_last_error());
        exit(1);
      }
    break;
  case LoadBatch:
    runBatch(C, Fd, OMPX_IO_OP_READ, Dev);
    break;
  case DiskRead: {
    // The disk's own rate: the whole data section into aligned host memory.
    uint64_t Chunks = (C->DataBytes + DiskRequest - 1) / DiskRequest;
#pragma omp parallel for schedule(dynamic) num_threads(O->Threads)
    for (uint64_t K = 0; K < Chunks; ++K) {
      uint64_t Begin = K * DiskRequest;
      uint64_t Size = C->DataBytes - Begin < DiskRequest ? C->DataBytes - Begin
                                                         : DiskRequest;
      preadFull(Fd, C->Mirror + Begin, Size, C->DataOffset + Begin);
    }
    break;
  }
  }
  double Seconds = benchNow() - T0;
  free(Host);
  if (close(Fd) != 0)
    die("close");
  if (O->Verify && !Save && Method != DiskRead)
    verifyDevice(C, Dev, MethodNames[Method]);
  return Seconds;
}

static void measure(struct CheckpointTy *C, const struct OptionsTy *O,
                    const char *Phase, const char *Source,
                    enum MethodTy Method, int Direct, int Baseline) {
  double Best = 1e30;
  for (int R = 0; R < O->Repeat; ++R) {
    double S = runOnce(C, O, Method, Direct);
    if (S < Best)
      Best = S;
  }
  uint64_t Bytes = C->DataBytes + (Method == SavePwrite || Method == SaveBatch
                                       ? C->DataOffset : 0);
  struct RowTy *Row = &Rows[NumRows++];
  *Row = (struct RowTy){Phase, Source, MethodNames[Method], MethodKeys[Method],
                        (double)Bytes / Best / 1e9, Best, 1.0, 0.0};
  if (Baseline >= 0)
    Row->Ratio = Row->GBps / Rows[Baseline].GBps;
}

int main(int Argc, char **Argv) {
  struct OptionsTy O = {"checkpoint-bench.safetensors", 8ull << 30,
                        omp_get_default_device(), 3, 8, 0, 0, 1};
  for (int I = 1; I < Argc; ++I) {
    const char *A = Argv[I];
    int HasValue = I + 1 < Argc;
    if (!strcmp(A, "--file") && HasValue)
      O.Path = Argv[++I];
    else if (!strcmp(A, "--total") && HasValue)
      O.Total = parseSize(Argv[++I]);
    else if (!strcmp(A, "--device") && HasValue)
      O.Device = atoi(Argv[++I]);
    else if (!strcmp(A, "--repeat") && HasValue)
      O.Repeat = atoi(Argv[++I]);
    else if (!strcmp(A, "--threads") && HasValue)
      O.Threads = atoi(Argv[++I]);
    else if (!strcmp(A, "--odirect"))
      O.ODirect = 1;
    else if (!strcmp(A, "--keep"))
      O.Keep = 1;
    else if (!strcmp(A, "--no-verify"))
      O.Verify = 0;
    else {
      fprintf(stderr, "usage: %s [--file PATH] [--total SIZE] [--device D] "
              "[--repeat N] [--threads T] [--odirect] [--keep] [--no-verify]\n",
              Argv[0]);
      return 2;
    }
  }
  if (O.Repeat < 1 || O.Threads < 1 || O.Total < (64ull << 20) ||
      O.Device < 0 || O.Device >= omp_get_num_devices()) {
    fprintf(stderr, "checkpoint-bench: --repeat and --threads at least 1, "
            "--total at least 64M, --device one of the %d offload devices\n",
            omp_get_num_devices());
    return 2;
  }
  benchPrintPlugin(BENCH_PLUGIN_PREFIX);

  struct CheckpointTy C;
  planCheckpoint(&C, O.Total);
  for (int I = 0; I < C.Count; ++I) {
    struct TensorTy *T = &C.Tensors[I];
    T->Dev = omp_target_alloc(T->Bytes, O.Device);
    if (!T->Dev)
      die("omp_target_alloc");
    if (omp_target_memcpy(T->Dev, C.Mirror + (T->Offset - C.DataOffset),
                          T->Bytes, 0, 0, O.Device, omp_get_initial_device()))
      die("omp_target_memcpy of the tensors to the device");
  }
  printf("checkpoint: %s, %d tensors, %.2f GiB of data (largest %.1f MiB), "
         "header %llu bytes; device %d, best of %d\n",
         O.Path, C.Count, (double)C.DataBytes / (1 << 30),
         (double)C.MaxBytes / (1 << 20), (unsigned long long)C.DataOffset,
         O.Device, O.Repeat);

  // Saves leave the batch's file behind: the loads read what it wrote.
  int Base = NumRows;
  measure(&C, &O, "save", "pagecache", SavePwrite, 0, -1);
  measure(&C, &O, "save", "pagecache", SaveBatch, 0, Base);
  // Read once before, so that every load finds the file in the page cache.
  {
    int Fd = open(O.Path, O_RDONLY);
    if (Fd < 0)
      die(O.Path);
    char *Scratch = malloc(DiskRequest);
    if (!Scratch)
      die("malloc");
    for (uint64_t Off = 0; Off < C.DataOffset + C.DataBytes; Off += DiskRequest) {
      uint64_t Left = C.DataOffset + C.DataBytes - Off;
      preadFull(Fd, Scratch, Left < DiskRequest ? Left : DiskRequest, Off);
    }
    free(Scratch);
    close(Fd);
  }
  Base = NumRows;
  measure(&C, &O, "load", "pagecache", LoadMemcpy, 0, -1);
  measure(&C, &O, "load", "pagecache", LoadPread, 0, Base);
  measure(&C, &O, "load", "pagecache", LoadBatch, 0, Base);
  if (O.ODirect) {
    int Fd = open(O.Path, O_RDONLY);
    if (Fd < 0 || fsync(Fd) != 0)
      die("fsync before the O_DIRECT loads");
    close(Fd);
    Base = NumRows;
    measure(&C, &O, "load", "odirect", LoadMemcpy, 1, -1);
    measure(&C, &O, "load", "odirect", LoadPread, 1, Base);
    measure(&C, &O, "load", "odirect", LoadBatch, 1, Base);
    int Disk = NumRows;
    measure(&C, &O, "load", "odirect", DiskRead, 1, Base);
    for (int R = Base; R <= Disk; ++R)
      Rows[R].DiskRatio = Rows[R].GBps / Rows[Disk].GBps;
  }

  printf("\n%-5s %-9s %-34s %8s %9s %9s %9s\n", "phase", "source", "method",
         "GB/s", "seconds", "x first", "x disk");
  for (int R = 0; R < NumRows; ++R) {
    char Disk[16] = "";
    if (Rows[R].DiskRatio > 0)
      snprintf(Disk, sizeof(Disk), "%.2f", Rows[R].DiskRatio);
    printf("%-5s %-9s %-34s %8.2f %9.3f %9.2f %9s\n", Rows[R].Phase,
           Rows[R].Source, Rows[R].Method, Rows[R].GBps, Rows[R].Seconds,
           Rows[R].Ratio, Disk);
  }
  printf("\n");
  for (int R = 0; R < NumRows; ++R)
    printf("CKPT phase=%s source=%s method=%s tensors=%d bytes=%llu "
           "seconds=%.6f gbps=%.4f ratio=%.4f disk_ratio=%.4f\n",
           Rows[R].Phase, Rows[R].Source, Rows[R].Key, C.Count,
           (unsigned long long)C.DataBytes, Rows[R].Seconds, Rows[R].GBps,
           Rows[R].Ratio, Rows[R].DiskRatio);
  printf("RESULT");
  for (int R = 0; R < NumRows; ++R)
    printf(" %s_%s_%s=%.4f", Rows[R].Phase, Rows[R].Source, Rows[R].Key,
           Rows[R].GBps);
  printf(" verified=%s\n", O.Verify ? "yes" : "no");

  for (int I = 0; I < C.Count; ++I)
    omp_target_free(C.Tensors[I].Dev, O.Device);
  free(C.Tensors);
  free(C.Prefix);
  free(C.Mirror);
  if (!O.Keep && unlink(O.Path) != 0)
    die("unlink");
  return 0;
}
