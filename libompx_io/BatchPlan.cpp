// SPDX-License-Identifier: Apache-2.0
#include "BatchPlan.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fcntl.h>
#include <map>
#include <sys/stat.h>
#include <tuple>

using namespace ompxio;

namespace {

/// One operation's range in some space (device memory or a file), for the
/// sweep below.
struct RangeTy {
  uint64_t Space[2]; ///< Which memory or file: ranges of one space meet.
  uint64_t Begin, End;
  size_t Index;
};

/// Call \p Meet(A, B) for every pair of ranges of \p Ranges that overlap in
/// one space. Sorted by start, each range meets only those still open when
/// it starts: few, unless many ranges cover each other.
template <typename MeetTy> void sweep(std::vector<RangeTy> &Ranges, MeetTy Meet) {
  auto Key = [](const RangeTy &R) {
    return std::make_tuple(R.Space[0], R.Space[1], R.Begin, R.Index);
  };
  std::sort(Ranges.begin(), Ranges.end(),
            [&](const RangeTy &A, const RangeTy &B) { return Key(A) < Key(B); });
  std::vector<const RangeTy *> Open;
  for (const RangeTy &R : Ranges) {
    Open.erase(std::remove_if(Open.begin(), Open.end(),
                              [&](const RangeTy *O) {
                                return O->Space[0] != R.Space[0] ||
                                       O->Space[1] != R.Space[1] ||
                                       O->End <= R.Begin;
                              }),
               Open.end());
    for (const RangeTy *O : Open)
      Meet(O->Index, R.Index);
    Open.push_back(&R);
  }
}

bool isRead(const ompx_io_op_t &Op) { return Op.opcode == OMPX_IO_OP_READ; }

/// Refuse operation \p I with EINVAL for \p Reason, unless it already is.
void refuse(std::vector<BatchRefusalTy> &Out, size_t I, std::string Reason) {
  if (!Out[I].Errno)
    Out[I] = {EINVAL, std::move(Reason)};
}

} // namespace

std::vector<BatchRefusalTy> ompxio::planBatch(const ompx_io_op_t *Ops,
                                              size_t Count) {
  std::vector<BatchRefusalTy> Out(Count);
  for (size_t I = 0; I < Count; ++I)
    if (Ops[I].opcode != OMPX_IO_OP_READ && Ops[I].opcode != OMPX_IO_OP_WRITE)
      Out[I] = {EINVAL, "opcode " + std::to_string(Ops[I].opcode) +
                            " is neither OMPX_IO_OP_READ nor OMPX_IO_OP_WRITE"};
  // Ranges the checks compare; a NULL buffer, a negative offset or an
  // overflowing range is the plugin's to refuse (EFAULT, EINVAL).
  auto Checkable = [&](size_t I) {
    const ompx_io_op_t &Op = Ops[I];
    return !Out[I].Errno && Op.count && Op.offset >= 0 &&
           Op.count <= uint64_t(INT64_MAX) - uint64_t(Op.offset);
  };

  // Destinations: a read's buffer may meet no other operation's buffer on
  // its device; two writes may share a source.
  std::vector<RangeTy> Buffers;
  for (size_t I = 0; I < Count; ++I)
    if (Checkable(I) && Ops[I].device_buf) {
      uint64_t Begin = uintptr_t(Ops[I].device_buf);
      Buffers.push_back({{uint64_t(int64_t(Ops[I].device_num)), 0}, Begin,
                         Begin + std::min<uint64_t>(Ops[I].count,
                                                    UINT64_MAX - Begin),
                         I});
    }
  std::vector<BatchRefusalTy> Found(Count);
  sweep(Buffers, [&](size_t A, size_t B) {
    if (isRead(Ops[A]))
      refuse(Found, A, "its destination overlaps the buffer of operation " +
                           std::to_string(B));
    if (isRead(Ops[B]))
      refuse(Found, B, "its destination overlaps the buffer of operation " +
                           std::to_string(A));
  });

  // File ranges: of one file, where one of the two writes. A write through
  // an O_APPEND descriptor lands at the end of file, wherever that is: it
  // covers the whole file, except against another append (appends of one
  // device land whole, in order).
  std::map<int, std::pair<struct stat, int>> Files; // fd: stat, flags
  std::vector<RangeTy> FileRanges;
  std::vector<bool> Append(Count);
  for (size_t I = 0; I < Count; ++I) {
    if (!Checkable(I))
      continue;
    auto It = Files.find(Ops[I].fd);
    if (It == Files.end()) {
      struct stat St;
      int Flags = -1;
      if (::fstat(Ops[I].fd, &St) == 0)
        Flags = ::fcntl(Ops[I].fd, F_GETFL);
      It = Files.emplace(Ops[I].fd, std::make_pair(St, Flags)).first;
    }
    const struct stat &St = It->second.first;
    int Flags = It->second.second;
    // Bad descriptors are the plugin's to refuse (EBADF); files without
    // positions (pipes, ttys) have no ranges to overlap.
    if (Flags < 0 || !(S_ISREG(St.st_mode) || S_ISBLK(St.st_mode)))
      continue;
    Append[I] = !isRead(Ops[I]) && (Flags & O_APPEND);
    uint64_t Begin = Append[I] ? 0 : uint64_t(Ops[I].offset);
    uint64_t End = Append[I] ? UINT64_MAX : Begin + Ops[I].count;
    FileRanges.push_back(
        {{uint64_t(St.st_dev), uint64_t(St.st_ino)}, Begin, End, I});
  }
  sweep(FileRanges, [&](size_t A, size_t B) {
    if ((isRead(Ops[A]) && isRead(Ops[B])) || (Append[A] && Append[B]))
      return;
    refuse(Found, A, "its file range overlaps that of operation " +
                         std::to_string(B) + (isRead(Ops[B]) ? "" : ", a write"));
    refuse(Found, B, "its file range overlaps that of operation " +
                         std::to_string(A) + (isRead(Ops[A]) ? "" : ", a write"));
  });
  for (size_t I = 0; I < Count; ++I)
    if (Found[I].Errno)
      Out[I] = std::move(Found[I]);
  return Out;
}
