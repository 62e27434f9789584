// SPDX-License-Identifier: Apache-2.0
#include "BatchPlan.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fcntl.h>
#include <sys/stat.h>
#include <tuple>

using namespace ompxio;

namespace {

/// One operation's range in some space (device memory or a file).
struct RangeTy {
  uint64_t Space[2]; ///< Which memory or file: ranges of one space meet.
  uint64_t Begin, End;
  size_t Index;
  unsigned Kind;  ///< One bit: the kind of operation, as Meets sees it.
  unsigned Meets; ///< Kinds it conflicts with; 0: never refused here.
};

/// No conflicting operation.
constexpr size_t NoPartner = SIZE_MAX;

/// Kinds are bits of a mask below this.
constexpr unsigned MaskLimit = 8;

/// For each range R of \p Ranges with a Meets mask, set Partner[R.Index] to
/// the operation R conflicts with (BatchPlan.h says which one), when there
/// is one. Sorted by start, a range meets only earlier ranges that end
/// after it starts, found with running maxima of their ends, and later
/// ranges that start before it ends, of which the next of a kind it meets
/// is the first: O(n log n) however many ranges cover each other.
void findPartners(std::vector<RangeTy> &Ranges, std::vector<size_t> &Partner) {
  auto Key = [](const RangeTy &R) {
    return std::make_tuple(R.Space[0], R.Space[1], R.Begin, R.Index);
  };
  std::sort(Ranges.begin(), Ranges.end(),
            [&](const RangeTy &A, const RangeTy &B) { return Key(A) < Key(B); });
  // Per position of a space: the largest end so far, and the next
  // position, of the kinds of one mask.
  std::vector<uint64_t> MaxEnd(Ranges.size());
  std::vector<size_t> Next(Ranges.size());
  for (size_t First = 0, Last; First < Ranges.size(); First = Last) {
    unsigned Masks = 0; // Bit M: some range of the space meets mask M.
    for (Last = First; Last < Ranges.size() &&
                       Ranges[Last].Space[0] == Ranges[First].Space[0] &&
                       Ranges[Last].Space[1] == Ranges[First].Space[1];
         ++Last)
      Masks |= 1u << Ranges[Last].Meets;
    for (unsigned M = 1; M < MaskLimit; ++M) {
      if (!(Masks & (1u << M)))
        continue;
      uint64_t Running = 0; // Every range ends after 0: 0 is none.
      for (size_t J = First; J < Last; ++J) {
        if (Ranges[J].Kind & M)
          Running = std::max(Running, Ranges[J].End);
        MaxEnd[J] = Running;
      }
      for (size_t J = Last, After = Last; J-- > First;) {
        Next[J] = After;
        if (Ranges[J].Kind & M)
          After = J;
      }
      for (size_t J = First; J < Last; ++J) {
        const RangeTy &R = Ranges[J];
        if (R.Meets != M)
          continue;
        // The first earlier range of a kind R meets still open at R.Begin
        // is where the running maximum first passes R.Begin.
        auto It = std::upper_bound(MaxEnd.begin() + First, MaxEnd.begin() + J,
                                   R.Begin);
        if (It != MaxEnd.begin() + J)
          Partner[R.Index] = Ranges[It - MaxEnd.begin()].Index;
        else if (Next[J] < Last && Ranges[Next[J]].Begin < R.End)
          Partner[R.Index] = Ranges[Next[J]].Index;
      }
    }
  }
}

bool isRead(const ompx_io_op_t &Op) { return Op.opcode == OMPX_IO_OP_READ; }

/// Kinds of operation against file ranges (bits of RangeTy::Kind).
enum : unsigned { FileRead = 1, FileWrite = 2, FileAppend = 4 };

} // namespace

std::vector<BatchRefusalTy> ompxio::planBatch(const ompx_io_op_t *Ops,
                                              size_t Count,
                                              const BatchDescriptorsTy &Fds) {
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
  Buffers.reserve(Count);
  for (size_t I = 0; I < Count; ++I)
    if (Checkable(I) && Ops[I].device_buf) {
      uint64_t Device = uint64_t(int64_t(Ops[I].device_num));
      uint64_t Begin = uintptr_t(Ops[I].device_buf);
      uint64_t End =
          Begin + std::min<uint64_t>(Ops[I].count, UINT64_MAX - Begin);
      unsigned Meets = isRead(Ops[I]) ? 1 : 0;
      Buffers.push_back({{Device, 0}, Begin, End, I, 1, Meets});
    }
  std::vector<size_t> BufferPartner(Count, NoPartner);
  findPartners(Buffers, BufferPartner);

  // File ranges: of one file, where one of the two writes. A write through
  // an O_APPEND descriptor lands at the end of file, wherever that is: it
  // covers the whole file, except against another append (appends of one
  // device land whole, in order).
  std::vector<RangeTy> FileRanges;
  FileRanges.reserve(Count);
  // Operations of one descriptor come in runs: its facts are looked up once
  // per run.
  const offloadio::DescriptorFactsTy *Facts = nullptr;
  int FactsFd = -1;
  for (size_t I = 0; I < Count; ++I) {
    if (!Checkable(I))
      continue;
    if (!Facts || FactsFd != Ops[I].fd) {
      auto It = Fds.find(Ops[I].fd);
      Facts = It == Fds.end() ? nullptr : &It->second;
      FactsFd = Ops[I].fd;
    }
    // Bad descriptors (not open, O_PATH, fstat failed) are the plugin's to
    // refuse (EBADF); files without positions (pipes, ttys) have no ranges
    // to overlap. Neither has a descriptor the caller did not describe.
    if (!Facts)
      continue;
    const struct stat &St = Facts->St;
    int Flags = Facts->Flags;
    if (Flags < 0 || (Flags & O_PATH) || Facts->StatErrno ||
        !(S_ISREG(St.st_mode) || S_ISBLK(St.st_mode)))
      continue;
    bool Append = !isRead(Ops[I]) && (Flags & O_APPEND);
    uint64_t Begin = Append ? 0 : uint64_t(Ops[I].offset);
    uint64_t End = Append ? UINT64_MAX : Begin + Ops[I].count;
    unsigned Kind = isRead(Ops[I]) ? FileRead : Append ? FileAppend : FileWrite;
    unsigned Meets = Kind == FileRead     ? FileWrite | FileAppend
                     : Kind == FileAppend ? FileRead | FileWrite
                                          : FileRead | FileWrite | FileAppend;
    uint64_t File[2] = {uint64_t(St.st_dev), uint64_t(St.st_ino)};
    FileRanges.push_back({{File[0], File[1]}, Begin, End, I, Kind, Meets});
  }
  std::vector<size_t> FilePartner(Count, NoPartner);
  findPartners(FileRanges, FilePartner);

  for (size_t I = 0; I < Count; ++I) {
    if (size_t P = BufferPartner[I]; P != NoPartner)
      Out[I] = {EINVAL, "its destination overlaps the buffer of operation " +
                            std::to_string(P)};
    else if (size_t P = FilePartner[I]; P != NoPartner)
      Out[I] = {EINVAL, "its file range overlaps that of operation " +
                            std::to_string(P) +
                            (isRead(Ops[P]) ? "" : ", a write")};
  }
  return Out;
}
