// SPDX-License-Identifier: Apache-2.0
//
// Half-open address ranges, any number of them overlapping each other, each
// held under a key of its own, and the question whether any of them
// overlaps a given range, in time logarithmic in their number (expected):
// a treap ordered by start, whose nodes know the largest end below them.
// IOBusyMemoryTy asks it at each free, and again at each release the free
// waits through, while any number of transfers are in flight.
#ifndef OFFLOADIO_IO_IORANGEINDEX_H
#define OFFLOADIO_IO_IORANGEINDEX_H

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace offloadio {

/// A multiset of ranges [Begin, End) by key, with overlap queries.
class IORangeIndexTy {
public:
  IORangeIndexTy() = default;
  IORangeIndexTy(const IORangeIndexTy &) = delete;
  IORangeIndexTy &operator=(const IORangeIndexTy &) = delete;

  /// Add [\p Begin, \p End) under \p Key; false, and nothing added, when
  /// \p Key already holds a range.
  bool insert(uint64_t Key, uintptr_t Begin, uintptr_t End);
  /// Remove the range of \p Key; false when it holds none.
  bool erase(uint64_t Key);
  /// Whether some range R has R.Begin < \p End and \p Begin < R.End.
  bool overlaps(uintptr_t Begin, uintptr_t End) const;
  /// Ranges held.
  size_t size() const { return Nodes.size(); }

private:
  /// One range, and its place in the tree.
  struct NodeTy {
    uintptr_t Begin, End; ///< The range.
    uintptr_t MaxEnd;     ///< The largest End of this node and those below.
    uint64_t Key;         ///< Its key; orders ranges of one Begin.
    uint64_t Priority; ///< Heap order: a parent's is at least its children's.
    NodeTy *Left = nullptr, *Right = nullptr; ///< Earlier, later ranges.
  };
  /// Whether \p A comes before \p B: by Begin, then by key.
  static bool before(const NodeTy &A, const NodeTy &B) {
    return A.Begin < B.Begin || (A.Begin == B.Begin && A.Key < B.Key);
  }
  static void update(NodeTy &N);
  /// Split \p T into the nodes before \p Pivot (\p L) and the others (\p R).
  static void split(NodeTy *T, const NodeTy &Pivot, NodeTy *&L, NodeTy *&R);
  /// Join \p L and \p R, every node of \p L before every node of \p R.
  static NodeTy *merge(NodeTy *L, NodeTy *R);
  /// \p T without \p N, which is in it.
  static NodeTy *remove(NodeTy *T, const NodeTy &N);

  /// The nodes, by key; the tree links them (an unordered_map never moves
  /// its elements).
  std::unordered_map<uint64_t, NodeTy> Nodes;
  NodeTy *Root = nullptr;
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IORANGEINDEX_H
