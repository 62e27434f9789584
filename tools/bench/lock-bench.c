// SPDX-License-Identifier: Apache-2.0
//
// lock-bench: the data_lock benchmark of the pinned-memory map.
//
//  1. Lock R separate 4 KiB host regions on device 0
//     (llvm_omp_target_lock_mem), then time N lock + unlock pairs of a
//     sub-buffer inside the middle region: the sub-buffer shares the region,
//     so each pair is one map lookup plus a reference count change.
//  2. The lookup inside a transfer: 64-byte omp_target_memcpy host -> device
//     from a sub-buffer of the middle region, with R regions locked, with
//     only that region locked, and with no region locked at all.
//  3. Locks of new regions, each of which the plugin checks: the time per
//     llvm_omp_target_lock_mem of NEW 64-byte regions (and per unlock), each
//     on a page of its own that it pins (mlock), or on a page another region
//     pinned already (the check and the books alone), with no other region
//     locked, with MANY 64-byte regions locked (packed, 64 to a page), and
//     with MAPPINGS separate mappings added to the process as well.
//
// Run through run-lock-bench.sh, which runs it with our plugin and with the
// stock LLVM 16 one. Lines starting with "RESULT " are for the script.
#include "bench-util.h"

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void *llvm_omp_target_lock_mem(void *Ptr, size_t Size, int Device);
void llvm_omp_target_unlock_mem(void *Ptr, int Device);

#define REGION_SIZE 4096
#define STRIDE 8192 // Regions do not touch: a gap page between neighbours.
#define SUB_OFFSET 256
#define SUB_SIZE 1024
#define ROUNDS 5
#define PAGE 4096

static long argValue(int Argc, char **Argv, int *I, const char *Name) {
  if (*I + 1 >= Argc) {
    fprintf(stderr, "lock-bench: %s needs a value\n", Name);
    exit(2);
  }
  char *End;
  long V = strtol(Argv[++*I], &End, 10);
  if (*End || V <= 0) {
    fprintf(stderr, "lock-bench: %s: '%s' is not a positive number\n", Name,
            Argv[*I]);
    exit(2);
  }
  return V;
}

/// Lines of /proc/self/maps: the mappings of the process.
static long countMappings(void) {
  FILE *F = fopen("/proc/self/maps", "r");
  if (!F)
    return -1;
  long Lines = 0;
  for (int C; (C = fgetc(F)) != EOF;)
    Lines += C == '\n';
  fclose(F);
  return Lines;
}

/// Lock (\p Lock) or unlock one 64-byte region at \p Offset of each of
/// the \p New pages from \p Pages.
static void eachPage(char *Pages, long New, long Offset, int Lock) {
  for (long I = 0; I < New; ++I) {
    char *P = Pages + I * PAGE + Offset;
    if (!Lock)
      llvm_omp_target_unlock_mem(P, 0);
    else if (!llvm_omp_target_lock_mem(P, 64, 0)) {
      fprintf(stderr, "lock-bench: locking new region %ld failed\n", I);
      exit(1);
    }
  }
}

/// Median microseconds per lock of a new 64-byte region at the start of
/// each of the \p New pages from \p Pages, and in *UnlockUs per unlock, in
/// ROUNDS rounds; with \p Pinned the regions are at offset 64, and the
/// page is held pinned by a region at offset 0.
struct NewLockTy {
  double LockUs, UnlockUs;
};
static struct NewLockTy timeNewLocks(char *Pages, long New, int Pinned) {
  double Lock[ROUNDS], Unlock[ROUNDS];
  long Offset = Pinned ? 64 : 0;
  if (Pinned)
    eachPage(Pages, New, 0, 1);
  for (int R = 0; R < ROUNDS; ++R) {
    double T0 = benchNow();
    eachPage(Pages, New, Offset, 1);
    double T1 = benchNow();
    eachPage(Pages, New, Offset, 0);
    double T2 = benchNow();
    Lock[R] = (T1 - T0) * 1e6 / (double)New;
    Unlock[R] = (T2 - T1) * 1e6 / (double)New;
  }
  if (Pinned)
    eachPage(Pages, New, 0, 0);
  struct NewLockTy Result = {benchMedian(Lock, ROUNDS),
                             benchMedian(Unlock, ROUNDS)};
  return Result;
}

/// Prints one line of part 3.
static void printNewLocks(const char *What, long Maps, struct NewLockTy Page,
                          struct NewLockTy Pinned) {
  printf("  %-30s %6ld mappings: %7.3f / %7.3f us   %7.3f / %7.3f us\n", What,
         Maps, Page.LockUs, Page.UnlockUs, Pinned.LockUs, Pinned.UnlockUs);
}

/// Times \p Copies 64-byte copies from \p Src to \p Dev in ROUNDS rounds;
/// returns the median microseconds per copy, *Best the best round's.
static double timeCopies(char *Dev, char *Src, long Copies, int Initial,
                         double *Best) {
  double Us[ROUNDS];
  long PerRound = Copies / ROUNDS ? Copies / ROUNDS : 1;
  for (int R = 0; R < ROUNDS; ++R) {
    double T0 = benchNow();
    for (long I = 0; I < PerRound; ++I)
      if (omp_target_memcpy(Dev, Src, 64, 0, 0, 0, Initial)) {
        fprintf(stderr, "lock-bench: omp_target_memcpy failed\n");
        exit(1);
      }
    Us[R] = (benchNow() - T0) * 1e6 / (double)PerRound;
  }
  double Median = benchMedian(Us, ROUNDS);
  *Best = Us[0];
  return Median;
}

int main(int Argc, char **Argv) {
  long Regions = 10000, Pairs = 1000000, Copies = 200000;
  long New = 256, Many = 100000, Mappings = 20000;
  for (int I = 1; I < Argc; ++I) {
    if (!strcmp(Argv[I], "--regions"))
      Regions = argValue(Argc, Argv, &I, "--regions");
    else if (!strcmp(Argv[I], "--pairs"))
      Pairs = argValue(Argc, Argv, &I, "--pairs");
    else if (!strcmp(Argv[I], "--copies"))
      Copies = argValue(Argc, Argv, &I, "--copies");
    else if (!strcmp(Argv[I], "--new"))
      New = argValue(Argc, Argv, &I, "--new");
    else if (!strcmp(Argv[I], "--many"))
      Many = argValue(Argc, Argv, &I, "--many");
    else if (!strcmp(Argv[I], "--mappings"))
      Mappings = argValue(Argc, Argv, &I, "--mappings");
    else if (!strcmp(Argv[I], "-h") || !strcmp(Argv[I], "--help")) {
      printf("usage: lock-bench [--regions R (10000)] [--pairs N (1000000)] "
             "[--copies M (200000)] [--new N (256)] [--many R (100000)] "
             "[--mappings M (20000)]\n");
      return 0;
    } else {
      fprintf(stderr, "lock-bench: unknown argument '%s'\n", Argv[I]);
      return 2;
    }
  }
  if (omp_get_num_devices() < 1) {
    fprintf(stderr, "lock-bench: no offload device\n");
    return 1;
  }
  int Initial = omp_get_initial_device();
  // A kernel makes libomptarget initialise device 0 (and load its plugin).
  int Ok = 0;
#pragma omp target device(0) map(from : Ok)
  Ok = 1;
  if (!Ok) {
    fprintf(stderr, "lock-bench: kernel on device 0 did not run\n");
    return 1;
  }
  benchPrintPlugin(BENCH_PLUGIN_PREFIX);

  char *Arena = aligned_alloc(4096, (size_t)Regions * STRIDE);
  if (!Arena) {
    fprintf(stderr, "lock-bench: out of memory\n");
    return 1;
  }
  memset(Arena, 1, (size_t)Regions * STRIDE);
  char **Locked = malloc((size_t)Regions * sizeof(char *));
  double T0 = benchNow();
  for (long R = 0; R < Regions; ++R) {
    Locked[R] = llvm_omp_target_lock_mem(Arena + R * STRIDE, REGION_SIZE, 0);
    if (!Locked[R]) {
      fprintf(stderr, "lock-bench: locking region %ld failed\n", R);
      return 1;
    }
  }
  double LockAll = benchNow() - T0;
  printf("setup: locked %ld separate %d-byte regions in %.1f ms (%.2f us "
         "each)\n",
         Regions, REGION_SIZE, LockAll * 1e3, LockAll * 1e6 / (double)Regions);

  long Mid = Regions / 2;
  char *Sub = Arena + Mid * STRIDE + SUB_OFFSET;
  // The sub-buffer must map into its region: region address + offset.
  void *SubLocked = llvm_omp_target_lock_mem(Sub, SUB_SIZE, 0);
  int Mismatch = SubLocked != Locked[Mid] + SUB_OFFSET;
  if (Mismatch)
    printf("WARNING: sub-buffer lock returned %p, expected %p (region %p + "
           "%d)\n",
           SubLocked, (void *)(Locked[Mid] + SUB_OFFSET), (void *)Locked[Mid],
           SUB_OFFSET);
  llvm_omp_target_unlock_mem(Sub, 0);

  // 1. Sub-buffer lock + unlock with Regions regions locked.
  double Us[ROUNDS];
  long PerRound = Pairs / ROUNDS ? Pairs / ROUNDS : 1;
  long Failed = 0;
  for (int R = 0; R < ROUNDS; ++R) {
    T0 = benchNow();
    for (long I = 0; I < PerRound; ++I) {
      Failed += llvm_omp_target_lock_mem(Sub, SUB_SIZE, 0) == NULL;
      llvm_omp_target_unlock_mem(Sub, 0);
    }
    Us[R] = (benchNow() - T0) * 1e6 / (double)PerRound;
  }
  double LockMedian = benchMedian(Us, ROUNDS), LockBest = Us[0];
  printf("sub-buffer lock+unlock, %ld regions locked: %.3f us per pair "
         "(median of %d rounds of %ld; best %.3f)%s\n",
         Regions, LockMedian, ROUNDS, PerRound, LockBest,
         Failed ? " -- SOME LOCKS FAILED" : "");

  // 2. 64-byte host -> device copies from the locked sub-buffer.
  char *Dev = omp_target_alloc(4096, 0);
  if (!Dev) {
    fprintf(stderr, "lock-bench: omp_target_alloc failed\n");
    return 1;
  }
  memset(Sub, 0x3c, 64);
  omp_target_memcpy(Dev, Sub, 64, 0, 0, 0, Initial);
  char Check[64];
  omp_target_memcpy(Check, Dev, 64, 0, 0, Initial, 0);
  int CopyBad = memcmp(Check, Sub, 64) != 0;
  if (CopyBad)
    printf("WARNING: the 64-byte copy from the locked sub-buffer arrived "
           "wrong\n");
  double BestMany, BestOne, BestNone;
  double CopyMany = timeCopies(Dev, Sub, Copies, Initial, &BestMany);
  for (long R = 0; R < Regions; ++R)
    if (R != Mid)
      llvm_omp_target_unlock_mem(Arena + R * STRIDE, 0);
  double CopyOne = timeCopies(Dev, Sub, Copies, Initial, &BestOne);
  llvm_omp_target_unlock_mem(Arena + Mid * STRIDE, 0);
  double CopyNone = timeCopies(Dev, Sub, Copies, Initial, &BestNone);
  printf("64-byte omp_target_memcpy H2D from the sub-buffer (median of %d "
         "rounds of %ld; best):\n",
         ROUNDS, Copies / ROUNDS);
  printf("  %5ld regions locked, source locked:   %.3f us (%.3f)\n", Regions,
         CopyMany, BestMany);
  printf("  %5d region locked,  source locked:   %.3f us (%.3f)\n", 1, CopyOne,
         BestOne);
  printf("  %5d regions locked, source unlocked: %.3f us (%.3f)\n", 0, CopyNone,
         BestNone);

  // 3. New regions: each lock checks the range and pins its page.
  char *NewPages = aligned_alloc(PAGE, (size_t)New * PAGE);
  char *Packed = aligned_alloc(PAGE, (size_t)Many * 64);
  if (!NewPages || !Packed) {
    fprintf(stderr, "lock-bench: out of memory\n");
    return 1;
  }
  memset(NewPages, 1, (size_t)New * PAGE);
  memset(Packed, 1, (size_t)Many * 64);
  long MapsNone = countMappings();
  struct NewLockTy NoneNew = timeNewLocks(NewPages, New, 0),
                   NonePinned = timeNewLocks(NewPages, New, 1);
  T0 = benchNow();
  for (long R = 0; R < Many; ++R)
    if (!llvm_omp_target_lock_mem(Packed + R * 64, 64, 0)) {
      fprintf(stderr, "lock-bench: locking packed region %ld failed\n", R);
      return 1;
    }
  double LockMany = benchNow() - T0;
  long MapsMany = countMappings();
  struct NewLockTy ManyNew = timeNewLocks(NewPages, New, 0),
                   ManyPinned = timeNewLocks(NewPages, New, 1);
  // Alternating protections, so that the kernel merges none of them.
  void **Extra = malloc((size_t)Mappings * sizeof(void *));
  long Made = 0;
  for (; Extra && Made < Mappings; ++Made) {
    Extra[Made] =
        mmap(NULL, PAGE, Made % 2 ? PROT_READ : PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (Extra[Made] == MAP_FAILED)
      break;
  }
  long MapsMapped = countMappings();
  struct NewLockTy MappedNew = timeNewLocks(NewPages, New, 0),
                   MappedPinned = timeNewLocks(NewPages, New, 1);
  for (long I = 0; I < Made; ++I)
    munmap(Extra[I], PAGE);
  for (long R = 0; R < Many; ++R)
    llvm_omp_target_unlock_mem(Packed + R * 64, 0);
  printf("setup: locked %ld packed 64-byte regions in %.1f ms (%.2f us "
         "each)\n",
         Many, LockMany * 1e3, LockMany * 1e6 / (double)Many);
  printf("lock / unlock of a new 64-byte region (median of %d rounds of "
         "%ld):\n",
         ROUNDS, New);
  printf("  %-30s %15s  %-23s  %s\n", "", "", "on its own page (mlock)",
         "on a page pinned already");
  char Label[64];
  printNewLocks("no region locked,", MapsNone, NoneNew, NonePinned);
  snprintf(Label, sizeof Label, "%ld regions locked,", Many);
  printNewLocks(Label, MapsMany, ManyNew, ManyPinned);
  snprintf(Label, sizeof Label, "%ld locked, +%ld mappings,", Many, Made);
  printNewLocks(Label, MapsMapped, MappedNew, MappedPinned);

  printf("RESULT lock_unlock_us=%.4f memcpy64_many_us=%.4f "
         "memcpy64_one_us=%.4f memcpy64_none_us=%.4f regions=%ld "
         "sub_ptr_ok=%d copy_ok=%d new_lock_none_us=%.4f "
         "new_lock_many_us=%.4f new_lock_mapped_us=%.4f "
         "pinned_page_lock_none_us=%.4f pinned_page_lock_many_us=%.4f "
         "pinned_page_lock_mapped_us=%.4f many=%ld mappings=%ld\n",
         LockMedian, CopyMany, CopyOne, CopyNone, Regions, !Mismatch, !CopyBad,
         NoneNew.LockUs, ManyNew.LockUs, MappedNew.LockUs, NonePinned.LockUs,
         ManyPinned.LockUs, MappedPinned.LockUs, Many, MapsMapped);
  omp_target_free(Dev, 0);
  free(Extra);
  free(Packed);
  free(NewPages);
  free(Locked);
  free(Arena);
  return Failed || CopyBad ? 1 : 0;
}
