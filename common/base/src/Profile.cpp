// SPDX-License-Identifier: Apache-2.0
#include "offloadio/Profile.h"
#include "offloadio/Info.h"

#include "llvm/Support/Format.h"

using namespace offloadio;

TimeProfileTy::TimeProfileTy(bool Enabled) : Enabled(Enabled) {}

void TimeProfileTy::record(const char *EntryPoint, uint64_t Nanos) {
  // Claim the first free slot or find the entry point's own; slots are
  // never released, so a name once seen keeps its slot.
  for (SlotTy &S : Slots) {
    const char *Name = S.Name.load(std::memory_order_acquire);
    if (!Name && S.Name.compare_exchange_strong(Name, EntryPoint,
                                                std::memory_order_acq_rel))
      Name = EntryPoint;
    if (Name == EntryPoint) {
      S.Calls.fetch_add(1, std::memory_order_relaxed);
      S.Nanos.fetch_add(Nanos, std::memory_order_relaxed);
      return;
    }
  }
  Other.Calls.fetch_add(1, std::memory_order_relaxed);
  Other.Nanos.fetch_add(Nanos, std::memory_order_relaxed);
}

void TimeProfileTy::printAndReset(llvm::raw_ostream &OS,
                                  const std::string &PluginName) {
  bool Heading = false;
  auto Line = [&](const char *Name, SlotTy &S) {
    uint64_t Calls = S.Calls.exchange(0, std::memory_order_relaxed);
    uint64_t Nanos = S.Nanos.exchange(0, std::memory_order_relaxed);
    if (!Calls)
      return;
    if (!Heading) {
      OS << linePrefix(PluginName)
         << ": profile: entry point or stage, calls, total ms, mean us\n";
      Heading = true;
    }
    // Each figure after a space of its own: a figure wider than its column
    // (a mean of 100 ms or more) must not run into the one before it.
    OS << linePrefix(PluginName) << ": profile: "
       << llvm::left_justify(Name, 22) << llvm::format(" %9llu", Calls)
       << llvm::format(" %11.3f", double(Nanos) / 1e6)
       << llvm::format(" %9.3f", double(Nanos) / 1e3 / double(Calls)) << "\n";
  };
  for (SlotTy &S : Slots)
    if (const char *Name = S.Name.load(std::memory_order_acquire))
      Line(Name, S);
  Line("other", Other);
  OS.flush();
}
