// SPDX-License-Identifier: Apache-2.0
//
// The TLS model of every thread_local in our libraries. Plugins are
// dlopened, so their thread-locals would default to dynamic TLS blocks,
// allocated per thread by __tls_get_addr. LeakSanitizer of LLVM 16 misreads
// glibc 2.36's dynamic thread vector: it takes a garbage range for such a
// block and its tracer crashes scanning it at exit ("Tracer caught signal
// 11", "LeakSanitizer has encountered a fatal error", exit status 1, after
// all of the program's output). Initial-exec thread-locals live in the
// static TLS block instead, from the surplus glibc reserves for dlopened
// libraries; ours take a few words of it.
#ifndef OFFLOADIO_STATICTLS_H
#define OFFLOADIO_STATICTLS_H

/// Put before `thread_local` in our libraries.
#define OFFLOADIO_STATIC_TLS __attribute__((tls_model("initial-exec")))

#endif // OFFLOADIO_STATICTLS_H
