#include <gtest/gtest.h>

#include <csiop/api/yaml.hpp>

namespace csiop::api {
namespace {

TEST(Yaml, ResolvesPlainScalarsWithTheCoreSchema) {
  const auto docs = parseYaml("a: 1\nb: true\nc: 1.5\nd: ~\ne: '1'\nf: yes\ng: 0x1f\nh: -7\n");
  ASSERT_EQ(docs.size(), 1u);
  const Json& d = docs[0];
  EXPECT_EQ(d["a"], 1);
  EXPECT_EQ(d["b"], true);
  EXPECT_DOUBLE_EQ(d["c"].get<double>(), 1.5);
  EXPECT_TRUE(d["d"].is_null());
  EXPECT_EQ(d["e"], "1");   // quoted: always a string
  EXPECT_EQ(d["f"], "yes"); // YAML 1.2: not a boolean
  EXPECT_EQ(d["g"], 31);
  EXPECT_EQ(d["h"], -7);
}

TEST(Yaml, ReadsEveryDocumentAndSkipsEmptyOnes) {
  const auto docs = parseYaml("---\na: 1\n---\n---\nb: 2\n...\n");
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[1]["b"], 2);
}

TEST(Yaml, ParsesJson) {
  const auto docs = parseYaml(R"({"a": [1, "x", {"b": null}]})");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["a"][1], "x");
}

TEST(Yaml, RejectsDuplicateKeysWithTheirPosition) {
  try {
    parseYaml("a: 1\nb: 2\na: 3\n");
    FAIL() << "no error";
  } catch (const YamlError& e) {
    EXPECT_STREQ(e.what(), "duplicate key \"a\" at line 3, column 1");
  }
}

TEST(Yaml, ReportsSyntaxErrorsWithTheirPosition) {
  try {
    parseYaml("a: [1, 2\nb: 3\n");
    FAIL() << "no error";
  } catch (const YamlError& e) {
    EXPECT_NE(std::string(e.what()).find("invalid YAML at line"), std::string::npos) << e.what();
  }
}

TEST(Yaml, BoundsAliasExpansion) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'j'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) {
      bomb += std::string(i ? ", *" : "*") + prev;
    }
    bomb += "]\n";
    prev = c;
  }
  EXPECT_THROW(parseYaml(bomb), YamlError);
}

TEST(Yaml, RejectsNonFiniteNumbers) {
  EXPECT_THROW(parseYaml("a: .inf\n"), YamlError);
}

TEST(Yaml, EmitsKubectlStyleBlocks) {
  const Json doc = Json::parse(R"({"a": {"b": [1, {"c": "d", "e": []}], "f": {}}, "g": "x"})");
  EXPECT_EQ(toYaml(doc), "a:\n  b:\n  - 1\n  - c: d\n    e: []\n  f: {}\ng: x\n");
}

TEST(Yaml, QuotesStringsThatWouldReadAsOtherTypes) {
  for (const char* s : {"true", "yes", "on",  "No",          "null", "~",    "1", "1.36", "0x10",
                        "-1",   "1e3", "",    " lead",       "a: b", "x #y", "-", "*x",   "&x",
                        "!x",   "{a}", "[a]", "line\nbreak", ".inf", "=",    "<<"}) {
    const std::string text = toYaml(Json{{"k", s}});
    EXPECT_EQ(text.rfind("k: \"", 0), 0u) << s << " -> " << text;
    EXPECT_EQ(parseYaml(text)[0]["k"], s) << text;
  }
  for (const char* s : {"--csi-address=/csi/csi.sock", "10m", "v1.2.3", "unix:///csi/csi.sock",
                        "$(KUBE_NODE_NAME)", "registry.k8s.io/x:v1"}) {
    EXPECT_EQ(toYaml(Json{{"k", s}}), std::string("k: ") + s + "\n");
  }
}

TEST(Yaml, RoundTripsArbitraryDocuments) {
  const Json doc = Json::parse(R"({"s": "x", "n": -3, "f": 2.5, "b": false, "z": null,
    "l": [[1, 2], [], {"k": [{"a": 1}]}], "o": {"deep": {"deeper": "é ü"}}})");
  EXPECT_EQ(parseYaml(toYaml(doc))[0], doc);
}

} // namespace
} // namespace csiop::api
