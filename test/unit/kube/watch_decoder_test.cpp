#include <gtest/gtest.h>

#include <csiop/kube/watch.hpp>

namespace csiop::kube {
namespace {

std::string event(std::string_view type, std::string_view name, std::string_view rv) {
  return R"({"type":")" + std::string(type) +
         R"(","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":")" +
         std::string(name) + R"(","resourceVersion":")" + std::string(rv) + R"("}}})" + "\n";
}

TEST(WatchDecoder, OneEventPerLine) {
  WatchDecoder d;
  auto events = d.feed(event("ADDED", "a", "1"));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, WatchEventType::Added);
  EXPECT_EQ(events[0].object["metadata"]["name"], "a");
  EXPECT_FALSE(d.hasPartialLine());
}

TEST(WatchDecoder, SeveralEventsInOneChunk) {
  WatchDecoder d;
  const auto events =
      d.feed(event("ADDED", "a", "1") + event("MODIFIED", "a", "2") + event("DELETED", "a", "3"));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, WatchEventType::Added);
  EXPECT_EQ(events[1].type, WatchEventType::Modified);
  EXPECT_EQ(events[2].type, WatchEventType::Deleted);
  EXPECT_EQ(events[2].object["metadata"]["resourceVersion"], "3");
}

TEST(WatchDecoder, EventsSplitAtEveryByte) {
  const std::string stream = event("ADDED", "a", "1") + event("MODIFIED", "b", "2");
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    WatchDecoder d;
    auto first = d.feed(std::string_view(stream).substr(0, cut));
    auto second = d.feed(std::string_view(stream).substr(cut));
    first.insert(first.end(), second.begin(), second.end());
    ASSERT_EQ(first.size(), 2u) << "cut at " << cut;
    EXPECT_EQ(first[1].object["metadata"]["name"], "b");
    EXPECT_FALSE(d.hasPartialLine());
  }
  WatchDecoder byteByByte;
  std::size_t count = 0;
  for (char c : stream)
    count += byteByByte.feed(std::string_view(&c, 1)).size();
  EXPECT_EQ(count, 2u);
}

TEST(WatchDecoder, KeepsAPartialLineUntilItsNewline) {
  WatchDecoder d;
  const std::string e = event("ADDED", "a", "1");
  EXPECT_TRUE(d.feed(std::string_view(e).substr(0, 10)).empty());
  EXPECT_TRUE(d.hasPartialLine());
  EXPECT_TRUE(d.feed(std::string_view(e).substr(10, e.size() - 11)).empty()); // all but '\n'
  EXPECT_EQ(d.feed("\n").size(), 1u);
}

TEST(WatchDecoder, SkipsBlankLinesAndCarriageReturns) {
  WatchDecoder d;
  std::string e = event("ADDED", "a", "1");
  e.insert(e.size() - 1, "\r");
  EXPECT_EQ(d.feed("\n\r\n" + e + "\n").size(), 1u);
}

TEST(WatchDecoder, Error410IsExpired) {
  WatchDecoder d;
  const auto events = d.feed(
      R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (52)","reason":"Expired","code":410}})json"
      "\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, WatchEventType::Error);
  EXPECT_TRUE(events[0].isExpired());
  const ApiError e = events[0].error();
  EXPECT_TRUE(e.isGone());
  EXPECT_EQ(e.code(), 410);
  EXPECT_EQ(e.status().message, "too old resource version: 1 (52)");
}

TEST(WatchDecoder, OtherErrorsAreNotExpired) {
  const auto e = parseWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","reason":"InternalError","code":500}})");
  EXPECT_FALSE(e.isExpired());
  EXPECT_TRUE(e.error().isServerError());
  EXPECT_FALSE(parseWatchEvent(event("DELETED", "a", "1")).isExpired());
}

TEST(WatchDecoder, Bookmarks) {
  const auto e = parseWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"12345","annotations":{"k8s.io/initial-events-end":"true"}}}})");
  EXPECT_EQ(e.type, WatchEventType::Bookmark);
  EXPECT_EQ(e.object["metadata"]["resourceVersion"], "12345");
  EXPECT_EQ(toString(e.type), "BOOKMARK");
}

TEST(WatchDecoder, RejectsMalformedEvents) {
  for (const char* bad :
       {"{not json", R"({"type":"ADDED"})", R"({"object":{}})", R"({"type":"RENAMED","object":{}})",
        R"({"type":"ADDED","object":1})", "[1,2]"}) {
    WatchDecoder d;
    try {
      d.feed(std::string(bad) + "\n");
      ADD_FAILURE() << bad;
    } catch (const TransportError& e) {
      EXPECT_EQ(e.kind(), TransportError::Kind::Protocol) << bad;
    }
  }
}

TEST(WatchDecoder, BoundsTheLineLength) {
  WatchDecoder d(100);
  EXPECT_TRUE(d.feed(std::string(60, ' ')).empty());
  EXPECT_THROW(d.feed(std::string(60, ' ')), TransportError);
}

} // namespace
} // namespace csiop::kube
