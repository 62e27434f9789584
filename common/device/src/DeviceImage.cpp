// SPDX-License-Identifier: Apache-2.0
// A loaded image's translated entries and their lookup by name.
#include "offloadio/DeviceImage.h"

using namespace offloadio;

DeviceImageTy::~DeviceImageTy() = default;

void DeviceImageTy::sealEntries() {
  Table.EntriesBegin = Entries.data();
  Table.EntriesEnd = Entries.data() + Entries.size();
  EntryIndex.clear();
  // The first of two entries with one name wins, as a search from the
  // table's start finds it.
  for (size_t I = 0; I < Entries.size(); ++I)
    if (Entries[I].name)
      EntryIndex.try_emplace(Entries[I].name, I);
}

const __tgt_offload_entry *
DeviceImageTy::findEntry(llvm::StringRef Name) const {
  auto It = EntryIndex.find(Name);
  return It == EntryIndex.end() ? nullptr : &Entries[It->second];
}
