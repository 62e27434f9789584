// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IORangeIndex.h"

#include <algorithm>

using namespace offloadio;

/// A priority from \p Key: keys come in sequence (tickets), priorities
/// must look random for the tree to stay balanced (splitmix64's mix).
static uint64_t priorityOf(uint64_t Key) {
  uint64_t Z = Key + 0x9e3779b97f4a7c15ull;
  Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ull;
  Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebull;
  return Z ^ (Z >> 31);
}

void IORangeIndexTy::update(NodeTy &N) {
  N.MaxEnd = N.End;
  if (N.Left)
    N.MaxEnd = std::max(N.MaxEnd, N.Left->MaxEnd);
  if (N.Right)
    N.MaxEnd = std::max(N.MaxEnd, N.Right->MaxEnd);
}

void IORangeIndexTy::split(NodeTy *T, const NodeTy &Pivot, NodeTy *&L,
                           NodeTy *&R) {
  if (!T) {
    L = R = nullptr;
    return;
  }
  if (before(*T, Pivot)) {
    split(T->Right, Pivot, T->Right, R);
    L = T;
  } else {
    split(T->Left, Pivot, L, T->Left);
    R = T;
  }
  update(*T);
}

IORangeIndexTy::NodeTy *IORangeIndexTy::merge(NodeTy *L, NodeTy *R) {
  if (!L || !R)
    return L ? L : R;
  if (L->Priority >= R->Priority) {
    L->Right = merge(L->Right, R);
    update(*L);
    return L;
  }
  R->Left = merge(L, R->Left);
  update(*R);
  return R;
}

IORangeIndexTy::NodeTy *IORangeIndexTy::remove(NodeTy *T, const NodeTy &N) {
  if (T == &N)
    return merge(T->Left, T->Right);
  if (before(N, *T))
    T->Left = remove(T->Left, N);
  else
    T->Right = remove(T->Right, N);
  update(*T);
  return T;
}

bool IORangeIndexTy::insert(uint64_t Key, uintptr_t Begin, uintptr_t End) {
  auto [It, New] = Nodes.try_emplace(Key);
  if (!New)
    return false;
  NodeTy &N = It->second;
  N.Begin = Begin;
  N.End = N.MaxEnd = End;
  N.Key = Key;
  N.Priority = priorityOf(Key);
  // Down to where N's priority puts it, the new node under every node
  // passed; there, the subtree splits around N into its children.
  NodeTy **Link = &Root;
  while (*Link && (*Link)->Priority >= N.Priority) {
    (*Link)->MaxEnd = std::max((*Link)->MaxEnd, End);
    Link = before(N, **Link) ? &(*Link)->Left : &(*Link)->Right;
  }
  split(*Link, N, N.Left, N.Right);
  update(N);
  *Link = &N;
  return true;
}

bool IORangeIndexTy::erase(uint64_t Key) {
  auto It = Nodes.find(Key);
  if (It == Nodes.end())
    return false;
  Root = remove(Root, It->second);
  Nodes.erase(It);
  return true;
}

bool IORangeIndexTy::overlaps(uintptr_t Begin, uintptr_t End) const {
  // Nodes on the left start no later than those on the right. If a node on
  // the left ends after Begin but none there overlaps, that one starts at
  // or after End, and so does every node on the right: one path suffices.
  for (const NodeTy *T = Root; T && T->MaxEnd > Begin;) {
    if (T->Begin < End && Begin < T->End)
      return true;
    T = T->Left && T->Left->MaxEnd > Begin ? T->Left : T->Right;
  }
  return false;
}
