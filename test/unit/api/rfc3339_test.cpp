#include <csiop/api/rfc3339.hpp>

#include <gtest/gtest.h>

namespace csiop::api {
namespace {

using namespace std::chrono;

TEST(Rfc3339, ReadsWhatTheApiServerWrites) {
  const auto t = parseRfc3339("2026-11-28T12:42:18Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->time_since_epoch(), seconds{1795869738});
  EXPECT_EQ(formatRfc3339(*t), "2026-11-28T12:42:18Z");
}

TEST(Rfc3339, ReadsMicroTimeWithAFractionAndAnOffset) {
  const auto t = parseRfc3339("2026-11-28T13:42:18.250000+01:00");
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, *parseRfc3339("2026-11-28T12:42:18Z") + milliseconds{250});
  EXPECT_EQ(*parseRfc3339("2026-11-28T12:42:18.5-00:30"),
            *parseRfc3339("2026-11-28T13:12:18Z") + milliseconds{500});
  // Digits beyond microseconds are dropped, not misread.
  EXPECT_EQ(*parseRfc3339("2026-11-28T12:42:18.123456789Z"),
            *parseRfc3339("2026-11-28T12:42:18Z") + microseconds{123456});
}

TEST(Rfc3339, FormatsWholeSecondsInUtc) {
  EXPECT_EQ(formatRfc3339(sys_days{year{2024} / 2 / 29} + hours{23} + minutes{59} + seconds{59} +
                          milliseconds{999}),
            "2024-02-29T23:59:59Z");
  EXPECT_EQ(formatRfc3339(system_clock::time_point{}), "1970-01-01T00:00:00Z");
}

TEST(Rfc3339, RefusesWhatIsNotADateTime) {
  for (const char* bad :
       {"", "2026-11-28", "2026-11-28T12:42Z", "2026-11-28T12:42:18", "2026-13-01T00:00:00Z",
        "2026-02-30T00:00:00Z", "2026-11-28T24:00:00Z", "2026-11-28T12:42:18.Z",
        "2026-11-28T12:42:18+0100", "2026-11-28T12:42:18Zjunk", "x026-11-28T12:42:18Z"}) {
    EXPECT_FALSE(parseRfc3339(bad)) << bad;
  }
}

} // namespace
} // namespace csiop::api
