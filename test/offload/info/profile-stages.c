// OFFLOADIO_PROFILE=1 also times the stages of staged copies and file reads,
// summed over the threads that run them: a staged upload's memcpy into
// bounce buffers and its waits for them, a staged download's waits for its
// DMAs and its memcpy out, and a file-engine worker's preads, copy
// enqueues and waits for the DMA out of its ring. With 1 MiB bounce buffers
// and file chunks, a 16 MiB copy each way is 16 memcpys each way, the 4 MiB
// that check the file read 4 more downloaded, and the 4 MiB file read 4
// preads and 4 enqueues. Without the variable, no stage is printed.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env OFFLOADIO_PROFILE=1 OFFLOADIO_STAGING_BUFFER_SIZE=1M \
// RUN:   OMPX_IO_PATH=staged \
// RUN:   OMPX_IO_CHUNK_SIZE=1M OMPX_IO_RING_DEPTH=2 \
// RUN:   %libomptarget-run-generic %t.dat 2>&1 | %fcheck-generic
// RUN: env OFFLOADIO_STAGING_BUFFER_SIZE=1M OMPX_IO_PATH=staged \
// RUN:   %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic -check-prefix=OFF

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ompx_io.h"

enum { CopyBytes = 16 << 20, FileBytes = 4 << 20 };

int main(int Argc, char **Argv) {
  if (Argc < 2)
    return 2;
  int Dev = omp_get_default_device(), Host = omp_get_initial_device();
  unsigned char *In = malloc(CopyBytes), *Out = malloc(CopyBytes);
  void *Buf = omp_target_alloc(CopyBytes, Dev);
  if (!In || !Out || !Buf)
    return 1;
  for (size_t I = 0; I < CopyBytes; ++I)
    In[I] = (unsigned char)(I * 7 + 3);
  int Rc = omp_target_memcpy(Buf, In, CopyBytes, 0, 0, Dev, Host);
  Rc |= omp_target_memcpy(Out, Buf, CopyBytes, 0, 0, Host, Dev);
  int Same = !memcmp(In, Out, CopyBytes);

  int Fd = open(Argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (Fd < 0 || write(Fd, Out, FileBytes) != FileBytes)
    return 1;
  memset(Out, 0, FileBytes);
  ssize_t N = ompx_target_pread(Fd, Buf, FileBytes, 0, Dev);
  Rc |= omp_target_memcpy(Out, Buf, FileBytes, 0, 0, Host, Dev);
  int FileSame = !memcmp(In, Out, FileBytes);
  close(Fd);
  omp_target_free(Buf, Dev);
  // stderr, like the profile: the order of the lines is then fixed.
  fprintf(stderr, "copies rc=%d same=%d; pread %zd same=%d\n", Rc, Same, N,
          FileSame);
  free(In);
  free(Out);
  return Rc;
}

// CHECK: copies rc=0 same=1; pread 4194304 same=1
// CHECK: profile: entry point or stage, calls, total ms, mean us
// CHECK-DAG: profile: stage: upload wait 16 {{[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$}}
// CHECK-DAG: profile: stage: upload memcpy 16 {{[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$}}
// CHECK-DAG: profile: stage: download wait 20 {{[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$}}
// CHECK-DAG: profile: stage: download memcpy 20 {{[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$}}
// CHECK-DAG: profile: io: pread 4 {{[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$}}
// CHECK-DAG: profile: io: enqueue 4 {{[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$}}

// OFF: copies rc=0 same=1; pread 4194304 same=1
// OFF-NOT: profile:
