// SPDX-License-Identifier: Apache-2.0
//
// The prefixes of offload-io's messages (MessagePrefix.h): one form for the
// plugins' lines, with or without a plugin and a device, the same source
// without the process tag for kept messages, libompx_io's form, and the
// stock plugins' form of the lines that mirror theirs.
#include "offloadio/MessagePrefix.h"

#include "gtest/gtest.h"

#include <string>
#include <unistd.h>

using namespace offloadio;

namespace {

/// "[<pid>]", with the rank where a launcher set one.
std::string tag() { return processTag(::getpid()); }

TEST(MessagePrefixTest, PluginLinesNameThePluginTheProcessAndTheDevice) {
  EXPECT_EQ(linePrefix("x86_64"), "offload-io(x86_64)" + tag());
  EXPECT_EQ(linePrefix("amdgpu", 2),
            "offload-io(amdgpu)" + tag() + " device 2");
  EXPECT_EQ(linePrefix("cuda", 0), "offload-io(cuda)" + tag() + " device 0");
  // Lines of no one plugin (setting warnings).
  EXPECT_EQ(linePrefix(""), "offload-io" + tag());
  EXPECT_EQ(linePrefix("", -1), "offload-io" + tag());
}

TEST(MessagePrefixTest, KeptMessagesNameTheSourceWithoutTheProcess) {
  EXPECT_EQ(pluginMessageSource("x86_64"), "offload-io(x86_64)");
  EXPECT_EQ(pluginMessageSource("cuda", 3), "offload-io(cuda) device 3");
}

TEST(MessagePrefixTest, LinesOfTheStockPluginsKeepTheStockPrefix) {
  // LLVM's TARGET_NAME is the string literal "PluginInterface", quotes
  // included, and the device its plugin-local number; no process tag.
  EXPECT_EQ(stockInfoLinePrefix(0), "\"PluginInterface\" device 0 info: ");
  EXPECT_EQ(stockInfoLinePrefix(3), "\"PluginInterface\" device 3 info: ");
}

TEST(MessagePrefixTest, TheLibraryHasItsOwnName) {
  EXPECT_EQ(libraryLinePrefix(), "ompx-io" + tag());
}

TEST(MessagePrefixTest, TheTagIsThePidOrThePidAndRank) {
  std::string Pid = std::to_string(::getpid());
  std::string Tag = tag();
  EXPECT_EQ(Tag.rfind("[" + Pid, 0), 0u) << Tag;
  EXPECT_EQ(Tag.back(), ']');
}

} // namespace
