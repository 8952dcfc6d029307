// api::flagArguments: command lines as Go's flag package reads them.
#include <gtest/gtest.h>

#include <csiop/api/command_line.hpp>

namespace csiop::api {
namespace {

std::vector<std::string> names(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const FlagArgument& f : flagArguments(args)) {
    out.push_back(std::to_string(f.index) + ":" + f.name + "=" + f.value.value_or("<none>"));
  }
  return out;
}

TEST(CommandLine, EveryFormGoAccepts) {
  EXPECT_EQ(names({"--v=5", "-timeout=30s", "--leader-election", "--worker-threads", "10",
                   "-csi-address", "/csi/csi.sock"}),
            (std::vector<std::string>{"0:v=5", "1:timeout=30s", "2:leader-election=<none>",
                                      "3:worker-threads=10", "5:csi-address=/csi/csi.sock"}));
}

TEST(CommandLine, ParsingStopsWhereGoStops) {
  // "--" ends the flags; so does "-" and "---x" (bad syntax to Go).
  EXPECT_EQ(names({"--a", "--", "--b"}), (std::vector<std::string>{"0:a=<none>"}));
  EXPECT_EQ(names({"-", "--b"}), std::vector<std::string>{});
  EXPECT_EQ(names({"---x", "--b"}), std::vector<std::string>{});
  EXPECT_EQ(names({"-=x", "--b"}), std::vector<std::string>{});
  // A value after a flag is taken as its value (whether it has one only the binary knows).
  EXPECT_EQ(names({"--a", "value", "--b=", "positional"}),
            (std::vector<std::string>{"0:a=value", "2:b="}));
}

TEST(CommandLine, TheLastOfAFlagCounts) {
  const auto f =
      lastFlag({"--probe-timeout=1s", "--v=2", "--probe-timeout", "3s"}, "probe-timeout");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->index, 2U);
  EXPECT_EQ(f->value, "3s");
  EXPECT_FALSE(lastFlag({"--v=2"}, "probe-timeout").has_value());
}

} // namespace
} // namespace csiop::api
