// SPDX-License-Identifier: Apache-2.0
//
// ompx-io: messages, number parsing and formatting, full-count IO.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ompx-io.h"
#include "offloadio/io/IOCallLimit.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

const char *const Prog = "ompx-io";

void usageError(const char *Fmt, ...) {
  va_list Ap;
  va_start(Ap, Fmt);
  fprintf(stderr, "%s: error: ", Prog);
  vfprintf(stderr, Fmt, Ap);
  va_end(Ap);
  fprintf(stderr, "\nRun '%s --help' for usage.\n", Prog);
  exit(2);
}

void fatal(const char *Fmt, ...) {
  va_list Ap;
  va_start(Ap, Fmt);
  fprintf(stderr, "%s: error: ", Prog);
  vfprintf(stderr, Fmt, Ap);
  va_end(Ap);
  fputc('\n', stderr);
  exit(1);
}

double now(void) {
  struct timespec T;
  clock_gettime(CLOCK_MONOTONIC, &T);
  return (double)T.tv_sec + (double)T.tv_nsec * 1e-9;
}

/// Parses "4096", "64K", "1M", "1MiB", "2G", "1GB" (binary units).
int parseSize(const char *S, uint64_t *Out) {
  char *End;
  errno = 0;
  if (!isdigit((unsigned char)*S))
    return -1;
  unsigned long long N = strtoull(S, &End, 10);
  if (errno)
    return -1;
  uint64_t Scale = 1;
  switch (toupper((unsigned char)*End)) {
  case 'K':
    Scale = 1ull << 10;
    ++End;
    break;
  case 'M':
    Scale = 1ull << 20;
    ++End;
    break;
  case 'G':
    Scale = 1ull << 30;
    ++End;
    break;
  case 'T':
    Scale = 1ull << 40;
    ++End;
    break;
  default:
    break;
  }
  if (Scale != 1 && (!strcasecmp(End, "iB") || !strcasecmp(End, "B")))
    End += strlen(End);
  else if (Scale == 1 && !strcasecmp(End, "B"))
    ++End;
  if (*End || N > UINT64_MAX / Scale)
    return -1;
  *Out = N * Scale;
  return 0;
}

int parseUnsigned(const char *S, unsigned long Max, unsigned long *Out) {
  char *End;
  errno = 0;
  if (!isdigit((unsigned char)*S))
    return -1;
  unsigned long N = strtoul(S, &End, 10);
  if (errno || *End || N > Max)
    return -1;
  *Out = N;
  return 0;
}

void formatSize(uint64_t N, char *Buf, size_t Len) {
  static const char *const Units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  unsigned U = 0;
  uint64_t Exact = N;
  while (U < 4 && Exact >= 1024 && Exact % 1024 == 0) {
    Exact /= 1024;
    ++U;
  }
  // A size whose whole number of its unit is long (6170943 KiB) reads as a
  // person would write it: one decimal of the largest unit it reaches.
  unsigned Human = 0;
  double Value = (double)N;
  while (Human < 4 && Value >= 1024) {
    Value /= 1024;
    ++Human;
  }
  if (Exact >= 10240 && Human > U)
    snprintf(Buf, Len, "%.1f %s", Value, Units[Human]);
  else
    snprintf(Buf, Len, "%llu %s", (unsigned long long)Exact, Units[U]);
}

/// Splits a comma-separated list into at most MAX_LIST newly allocated items.
int splitList(const char *Opt, const char *S, char **Items) {
  char *Copy = strdup(S), *Save = NULL;
  int N = 0;
  for (char *Tok = strtok_r(Copy, ",", &Save); Tok;
       Tok = strtok_r(NULL, ",", &Save)) {
    while (isspace((unsigned char)*Tok))
      ++Tok;
    if (!*Tok)
      continue;
    if (N == MAX_LIST)
      usageError("%s: at most %d values", Opt, MAX_LIST);
    Items[N++] = strdup(Tok);
  }
  free(Copy);
  if (N == 0)
    usageError("%s: empty list", Opt);
  return N;
}

/// Full-count pread/pwrite, as the engine does it; returns bytes or -1.
ssize_t fullIO(int Write, int Fd, char *Buf, size_t Count, off_t Off) {
  size_t Done = 0;
  while (Done < Count) {
    size_t Want = Count - Done;
    if (Want > OFFLOADIO_MAX_IO_PER_CALL)
      Want = OFFLOADIO_MAX_IO_PER_CALL;
    ssize_t N = Write ? pwrite(Fd, Buf + Done, Want, Off + (off_t)Done)
                      : pread(Fd, Buf + Done, Want, Off + (off_t)Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return -1;
    if (N == 0) {
      if (Write)
        errno = EIO;
      else
        errno = ENODATA;
      return -1;
    }
    Done += (size_t)N;
  }
  return (ssize_t)Done;
}

int cmpDouble(const void *A, const void *B) {
  double X = *(const double *)A, Y = *(const double *)B;
  return X < Y ? -1 : X > Y;
}
