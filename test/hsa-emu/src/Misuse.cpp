// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: reporting a caller's misuse of the API.
//
// Where ROCr would fail or misbehave on a misuse (a destroyed signal or
// queue used, memory freed twice, a copy of memory the engine cannot reach),
// the emulation says so in one line and, by default, aborts: a test whose
// program ignores status codes, or that only sees a hang or a wrong value
// later, still fails at the call that was wrong. README.md ("Checks on
// callers") lists the checks and what ROCr does in each case.
#include "Emu.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

using namespace hsaemu;

void hsaemu::misuse(const char *Call, const char *Fmt, ...) {
  char Buffer[1024];
  va_list Args;
  va_start(Args, Fmt);
  std::vsnprintf(Buffer, sizeof(Buffer), Fmt, Args);
  va_end(Args);
  // One write, so that lines of concurrent reports do not interleave.
  std::fprintf(stderr, "hsa-emu: misuse: %s: %s\n", Call, Buffer);
  // Before the first hsa_init no setting was read: the default applies.
  const ConfigTy *C = configOrNull();
  if (!C || C->Misuse == MisuseModeTy::Abort) {
    std::fflush(stderr);
    std::abort();
  }
}
