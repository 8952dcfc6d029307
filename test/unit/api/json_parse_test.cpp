// parseJson: nlohmann's meaning of a JSON text (the same values, keys in the same order, the last
// of duplicate keys winning), in time linear in the text, and documents beyond the limits refused
// with where.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <csiop/api/json_parse.hpp>
#include <csiop/api/yaml.hpp>

namespace csiop::api {
namespace {

namespace fs = std::filesystem;

std::string wideObject(std::size_t keys) {
  std::string out = "{";
  for (std::size_t i = 0; i < keys; ++i) {
    out += (i == 0 ? "\"key" : ",\"key") + std::to_string(i) + "\":" + std::to_string(i);
  }
  return out + "}";
}

std::string errorOf(std::string_view text, const JsonLimits& limits = {}) {
  try {
    parseJson(text, limits);
  } catch (const JsonError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JsonParse, ReadsWhatNlohmannReads) {
  for (const char* text :
       {R"({"s": "x\u00e9\n", "n": -3, "u": 18446744073709551615, "f": 2.5e-3, "b": false,
            "z": null, "l": [[1, 2], [], {"k": [{"a": 1}]}], "o": {"deep": {"deeper": {}}}})",
        "[]", "{}", "1", "\"text\"", "null", " [1, [2, [3]]] ", "123456789012345678901234567890"}) {
    EXPECT_EQ(parseJson(text), Json::parse(text)) << text;
    EXPECT_EQ(parseJson(text).dump(), Json::parse(text).dump()) << text; // and the same order
  }
}

TEST(JsonParse, ReadsEveryExampleAsNlohmannDoes) {
  std::size_t read = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(CSIOP_SOURCE_DIR) / "examples")) {
    if (entry.path().extension() != ".yaml") {
      continue;
    }
    std::ifstream in(entry.path());
    for (const Json& doc : parseYaml(std::string(std::istreambuf_iterator<char>(in), {}))) {
      const std::string text = doc.dump(2);
      EXPECT_EQ(parseJson(text).dump(), Json::parse(text).dump()) << entry.path();
      ++read;
    }
  }
  EXPECT_GT(read, 5u);
}

TEST(JsonParse, ReadsWideObjectsInLinearTime) {
  // 1.5 MB: nlohmann's own parse into ordered_json took 9 s (a scan of the keys per key).
  std::string text = wideObject(100'000);
  text.back() = ',';
  text += R"("key5":"last","key99999":{"a":[1]}})";
  const Json doc = parseJson(text, {.maxMembers = 100'000});
  ASSERT_EQ(doc.size(), 100'000u);
  EXPECT_EQ(doc["key5"], "last"); // the last value of a duplicate key, as nlohmann keeps
  EXPECT_EQ(std::next(doc.begin(), 5).key(), "key5"); // in the place of the first
  EXPECT_EQ(doc["key99999"], Json::parse(R"({"a":[1]})"));
  EXPECT_EQ(doc.begin().key(), "key0");
  EXPECT_EQ(doc["key12345"], 12345);
}

TEST(JsonParse, DuplicatesOfSmallObjectsToo) {
  EXPECT_EQ(parseJson(R"({"a": 1, "b": 2, "a": {"c": 3}})").dump(), R"({"a":{"c":3},"b":2})");
}

TEST(JsonParse, RefusesObjectsWiderThanTheLimitWithTheirPath) {
  const std::string data = wideObject(10'001);
  EXPECT_EQ(errorOf(R"({"spec": {"objects": [{"kind": "ConfigMap", "data": )" + data + "}]}}"),
            "object at /spec/objects/0/data has more than 10000 members");
  EXPECT_EQ(errorOf(data), "object at the top level has more than 10000 members");
  EXPECT_EQ(parseJson(wideObject(10'000)).size(), 10'000u);
  // A duplicate is not a member more.
  EXPECT_EQ(parseJson(R"({"a":1,"b":2,"a":3})", {.maxMembers = 2}).size(), 2u);
}

TEST(JsonParse, RefusesArraysLongerThanTheLimitWithTheirPath) {
  EXPECT_EQ(errorOf(R"({"a/b": [0, {"x~y": [1, 2, 3, 4]}]})", {.maxItems = 3}),
            "array at /a~1b/1/x~0y has more than 3 items");
  std::string items = "[0";
  for (int i = 1; i < 100'001; ++i) {
    items += ",0";
  }
  EXPECT_EQ(errorOf(items + "]"), "array at the top level has more than 100000 items");
}

TEST(JsonParse, RefusesDeeperNestingThanTheLimit) {
  EXPECT_EQ(parseJson(std::string(200, '[') + std::string(200, ']')).size(), 1u);
  EXPECT_EQ(errorOf(std::string(201, '[') + std::string(201, ']')).substr(0, 43),
            "JSON nested deeper than 200 levels (array a");
  EXPECT_EQ(errorOf(R"({"a": {"b": [{"c": 1}]}})", {.maxDepth = 3}),
            "JSON nested deeper than 3 levels (object at /a/b/0)");
  // A long key is cut short in the message.
  const std::string key(100'000, 'k');
  const std::string message = errorOf("{\"" + key + "\": [[[1]]]}", {.maxDepth = 2});
  EXPECT_EQ(message.size(), std::string("JSON nested deeper than 2 levels (array at /").size() +
                                199 + std::string("...)").size());
}

TEST(JsonParse, SyntaxErrorsAreNlohmanns) {
  for (const char* text : {"{x", "", "[1, 2", "{\"a\": 1} trailing", "1e999", "\"\xff\""}) {
    std::string expected;
    try {
      const Json parsed = Json::parse(text);
      ADD_FAILURE() << "nlohmann parsed " << parsed.dump();
    } catch (const Json::exception& e) {
      expected = e.what();
    }
    ASSERT_FALSE(expected.empty()) << text;
    EXPECT_EQ(errorOf(text), expected);
  }
}

TEST(JsonParse, LimitsCanBeLifted) {
  const std::string text = std::string(1000, '[') + std::string(1000, ']');
  EXPECT_EQ(parseJson(text, JsonLimits::none()), Json::parse(text));
}

} // namespace
} // namespace csiop::api
