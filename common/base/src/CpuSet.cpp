// SPDX-License-Identifier: Apache-2.0
#include "offloadio/CpuSet.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <iterator>

using namespace offloadio;

CpuSetTy::CpuSetTy(std::vector<unsigned> List) : Cpus(std::move(List)) {
  std::sort(Cpus.begin(), Cpus.end());
  Cpus.erase(std::unique(Cpus.begin(), Cpus.end()), Cpus.end());
}

Expected<CpuSetTy> CpuSetTy::parse(llvm::StringRef Text,
                                   llvm::StringRef Source) {
  llvm::StringRef Trimmed = Text.trim();
  std::vector<unsigned> Cpus;
  if (Trimmed.empty())
    return CpuSetTy();
  auto Bad = [&](llvm::StringRef Item, const char *Why) {
    return makeError(ErrorCode::InvalidArgument,
                     "{0}: '{1}' is not a CPU list: '{2}' {3}", Source,
                     Trimmed, Item, Why);
  };
  llvm::SmallVector<llvm::StringRef, 8> Items;
  Trimmed.split(Items, ',');
  for (llvm::StringRef Item : Items) {
    auto [FirstText, LastText] = Item.split('-');
    unsigned First = 0, Last = 0;
    // getAsInteger takes no sign or space, but would take "0x1f".
    auto IsNumber = [](llvm::StringRef S) {
      return !S.empty() && S.size() <= 6 &&
             llvm::all_of(S, [](char C) { return C >= '0' && C <= '9'; });
    };
    if (!IsNumber(FirstText) || FirstText.getAsInteger(10, First))
      return Bad(Item, "does not start with a CPU number");
    Last = First;
    if (Item.contains('-') &&
        (!IsNumber(LastText) || LastText.getAsInteger(10, Last)))
      return Bad(Item, "does not end with a CPU number");
    if (Last < First)
      return Bad(Item, "is a range that ends before it starts");
    if (Last >= MaxCpus)
      return Bad(Item, "names a CPU beyond the most a kernel has");
    for (unsigned Cpu = First; Cpu <= Last; ++Cpu)
      Cpus.push_back(Cpu);
  }
  return CpuSetTy(std::move(Cpus));
}

CpuSetTy CpuSetTy::intersect(const CpuSetTy &Other) const {
  std::vector<unsigned> Both;
  std::set_intersection(Cpus.begin(), Cpus.end(), Other.Cpus.begin(),
                        Other.Cpus.end(), std::back_inserter(Both));
  CpuSetTy Result;
  Result.Cpus = std::move(Both);
  return Result;
}

bool CpuSetTy::contains(unsigned Cpu) const {
  return std::binary_search(Cpus.begin(), Cpus.end(), Cpu);
}

std::string CpuSetTy::str() const {
  std::string Out;
  for (size_t I = 0; I < Cpus.size();) {
    size_t J = I;
    while (J + 1 < Cpus.size() && Cpus[J + 1] == Cpus[J] + 1)
      ++J;
    if (!Out.empty())
      Out += ',';
    Out += std::to_string(Cpus[I]);
    if (J > I)
      Out += '-' + std::to_string(Cpus[J]);
    I = J + 1;
  }
  return Out;
}
