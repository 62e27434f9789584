// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IOBusyMemory.h"

#include <algorithm>

using namespace offloadio;

/// One past the last byte of [Begin, Begin + Size), saturated.
static uintptr_t rangeEnd(uintptr_t Begin, size_t Size) {
  return Size > UINTPTR_MAX - Begin ? UINTPTR_MAX : Begin + Size;
}

IOBusyMemoryTy::TicketTy IOBusyMemoryTy::acquire(const void *Begin,
                                                 size_t Size) {
  auto Addr = reinterpret_cast<uintptr_t>(Begin);
  uintptr_t End = rangeEnd(Addr, Size);
  std::unique_lock<std::mutex> Guard(Lock);
  Released.wait(Guard, [&] { return !freeingLocked(Addr, End); });
  TicketTy Ticket = NextTicket++;
  Ranges.insert(Ticket, Addr, End);
  return Ticket;
}

void IOBusyMemoryTy::release(TicketTy Ticket) {
  if (!Ticket)
    return;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Ranges.erase(Ticket);
  }
  Released.notify_all();
}

bool IOBusyMemoryTy::overlapsLocked(uintptr_t Begin, uintptr_t End) const {
  return Ranges.overlaps(Begin, End);
}

bool IOBusyMemoryTy::freeingLocked(uintptr_t Begin, uintptr_t End) const {
  for (const RangeTy &R : Freeing)
    if (R.Begin < End && Begin < R.End)
      return true;
  return false;
}

bool IOBusyMemoryTy::waitUntilIdle(const void *Begin, size_t Size) {
  auto Addr = reinterpret_cast<uintptr_t>(Begin);
  uintptr_t End = rangeEnd(Addr, Size);
  std::unique_lock<std::mutex> Guard(Lock);
  if (!overlapsLocked(Addr, End))
    return false;
  Released.wait(Guard, [&] { return !overlapsLocked(Addr, End); });
  return true;
}

bool IOBusyMemoryTy::beginFree(const void *Begin, size_t Size) {
  auto Addr = reinterpret_cast<uintptr_t>(Begin);
  uintptr_t End = rangeEnd(Addr, Size);
  std::unique_lock<std::mutex> Guard(Lock);
  bool Waited = overlapsLocked(Addr, End);
  Released.wait(Guard, [&] { return !overlapsLocked(Addr, End); });
  Freeing.push_back({Addr, End});
  return Waited;
}

void IOBusyMemoryTy::endFree(const void *Begin, size_t Size) {
  auto Addr = reinterpret_cast<uintptr_t>(Begin);
  uintptr_t End = rangeEnd(Addr, Size);
  {
    std::lock_guard<std::mutex> Guard(Lock);
    auto It = std::find_if(Freeing.begin(), Freeing.end(), [&](RangeTy &R) {
      return R.Begin == Addr && R.End == End;
    });
    if (It != Freeing.end())
      Freeing.erase(It);
  }
  Released.notify_all();
}

bool IOBusyMemoryTy::isBusy(const void *Begin, size_t Size) const {
  auto Addr = reinterpret_cast<uintptr_t>(Begin);
  std::lock_guard<std::mutex> Guard(Lock);
  return overlapsLocked(Addr, rangeEnd(Addr, Size));
}

size_t IOBusyMemoryTy::busyRanges() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Ranges.size();
}
