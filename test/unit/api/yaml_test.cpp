#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <regex>
#include <string>
#include <vector>

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

TEST(Yaml, AStrayFlowTokenIsAnErrorNotALoop) {
  // yaml-cpp 0.7's LoadAll allocated a null document after another, for ever, at such a token.
  try {
    parseYaml(",");
    FAIL() << "no error";
  } catch (const YamlError& e) {
    EXPECT_STREQ(e.what(), "invalid YAML at line 1, column 1: unexpected ','");
  }
  for (const char* text : {"]", "}", "a: 1\n---\n,\n", ", x", "- !+(.,.)", "---\n,\n"}) {
    EXPECT_THROW(parseYaml(text), YamlError) << text;
  }
}

TEST(Yaml, AliasesCopyTheAnchoredValue) {
  const auto docs = parseYaml("a: &x {b: [1, 2]}\nc: *x\n---\nd: &x 3\ne: *x\nf: &n\ng: *n\n");
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0]["c"], docs[0]["a"]);
  EXPECT_EQ(docs[1]["e"], 3);
  EXPECT_TRUE(docs[1]["g"].is_null());
  EXPECT_THROW(parseYaml("a: &x [1, *x]\n"), YamlError); // inside what it names
  EXPECT_THROW(parseYaml("a: *nowhere\n"), YamlError);
}

TEST(Yaml, ComplexKeysReadAsTheirJson) {
  const auto docs = parseYaml("? [1, 2]\n: x\n? {a: 1}\n: y\n1: z\n");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].dump(), R"({"[1,2]":"x","{\"a\":1}":"y","1":"z"})");
}

TEST(Yaml, BoundsNestingAlsoThroughAliases) {
  YamlLimits limits;
  limits.maxDepth = 3;
  EXPECT_EQ(parseYaml("a: {b: [1]}\n", limits).size(), 1u);
  EXPECT_THROW(parseYaml("a: {b: [[1]]}\n", limits), YamlError);
  EXPECT_THROW(parseYaml("x: &x [[1]]\na: {b: *x}\n", limits), YamlError);
  try {
    parseYaml(std::string(100'000, '[') + std::string(100'000, ']'));
    FAIL() << "no error";
  } catch (const YamlError& e) {
    EXPECT_STREQ(e.what(), "document nested deeper than 200 levels (line 1, column 202)");
  }
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

// --- plain scalars: the core schema's patterns, scanned ---

// The core schema as regular expressions (the resolver's former self): the reference.
Json resolveByRegex(const std::string& s) {
  static const std::regex kNull("~|null|Null|NULL|");
  static const std::regex kBool("true|True|TRUE|false|False|FALSE");
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kOct("0o[0-7]+");
  static const std::regex kHex("0x[0-9a-fA-F]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  static const std::regex kInf("[-+]?\\.(inf|Inf|INF)");
  static const std::regex kNan("\\.(nan|NaN|NAN)");
  const auto match = [&](const std::regex& re) { return std::regex_match(s, re); };
  if (match(kNull)) {
    return nullptr;
  }
  if (match(kBool)) {
    return s[0] == 't' || s[0] == 'T';
  }
  const auto integer = [&](const char* digits, int base) -> Json {
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(digits, &end, base);
    if (errno == 0 && *end == '\0') {
      return v;
    }
    return std::strtod(s.c_str(), nullptr);
  };
  if (match(kInt)) {
    return integer(s.c_str(), 10);
  }
  if (match(kOct)) {
    return integer(s.c_str() + 2, 8);
  }
  if (match(kHex)) {
    return integer(s.c_str() + 2, 16);
  }
  if (match(kFloat)) {
    return std::strtod(s.c_str(), nullptr);
  }
  if (match(kInf) || match(kNan)) {
    throw YamlError("non-finite");
  }
  return s;
}

std::string typed(const std::function<Json()>& resolve) {
  try {
    const Json v = resolve();
    return std::string(v.type_name()) + " " + v.dump();
  } catch (const YamlError&) {
    return "error";
  }
}

TEST(Yaml, ResolverIsTheCoreSchemasPatterns) {
  const std::vector<std::string> pieces = {"0", "1", "7", "9",   "x",   "o",    "a",    "e", "E",
                                           ".", "+", "-", "inf", "NaN", "null", "true", "~", "_"};
  std::size_t strings = 0;
  std::vector<std::size_t> at;
  for (;;) {
    std::string s;
    for (const std::size_t i : at) {
      s += pieces[i];
    }
    ++strings;
    ASSERT_EQ(typed([&] { return resolvePlainScalar(s); }),
              typed([&] { return resolveByRegex(s); }))
        << "\"" << s << "\"";
    std::size_t k = 0;
    while (k < at.size() && at[k] + 1 == pieces.size()) {
      at[k++] = 0;
    }
    if (k == at.size()) {
      if (at.size() == 4) {
        break;
      }
      at.push_back(0);
    } else {
      ++at[k];
    }
  }
  EXPECT_GT(strings, 100'000u);
}

TEST(Yaml, NumbersBeyondADoubleStayStrings) {
  // As Go's reader (kubectl's) leaves them: its ParseFloat fails with ErrRange.
  const std::string digits(200'000, '7');
  EXPECT_EQ(resolvePlainScalar(digits), digits);
  EXPECT_EQ(resolvePlainScalar("-" + digits), "-" + digits);
  EXPECT_EQ(resolvePlainScalar("1e" + digits), "1e" + digits);
  EXPECT_EQ(resolvePlainScalar("0x" + std::string(100'000, 'f')), "0x" + std::string(100'000, 'f'));
  EXPECT_EQ(resolvePlainScalar("0o" + std::string(100'000, '7')), "0o" + std::string(100'000, '7'));
  EXPECT_EQ(resolvePlainScalar("1e-" + digits), 0.0); // too small is zero, as in Go
  EXPECT_DOUBLE_EQ(resolvePlainScalar("1." + digits).get<double>(), 1.7777777777777777);
  EXPECT_EQ(resolvePlainScalar("99999999999999999999"), 1e20); // beyond 64 bits: a double
  EXPECT_EQ(resolvePlainScalar(std::string(100'000, '.')), std::string(100'000, '.'));
  EXPECT_EQ(resolvePlainScalar("+" + std::string(100'000, '-')), "+" + std::string(100'000, '-'));

  const auto docs = parseYaml("k: " + digits + "\n");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["k"], digits);
}

TEST(Yaml, QuotesLongNumberLikeStrings) {
  const std::string digits(200'000, '4');
  for (const std::string& s : {digits, "-" + digits, digits + "e5", "." + digits}) {
    const std::string text = toYaml(Json{{"k", s}});
    EXPECT_EQ(text, "k: \"" + s + "\"\n");
    EXPECT_EQ(parseYaml(text)[0]["k"], s);
  }
  const std::string word = digits + "z";
  EXPECT_EQ(toYaml(Json{{"k", word}}), "k: " + word + "\n");
}

// --- the shape of a document: linear in its size, bounded ---

std::string wideMap(std::size_t keys, std::size_t indent) {
  std::string out;
  for (std::size_t i = 0; i < keys; ++i) {
    out += std::string(indent, ' ') + "key" + std::to_string(i) + ": v" + std::to_string(i) + "\n";
  }
  return out;
}

TEST(Yaml, ReadsWideMapsInLinearTime) {
  YamlLimits wide;
  wide.maxMembers = 200'000;
  const auto docs = parseYaml(wideMap(100'000, 0), wide);
  ASSERT_EQ(docs.size(), 1u);
  ASSERT_EQ(docs[0].size(), 100'000u);
  EXPECT_EQ(docs[0].begin().key(), "key0");
  EXPECT_EQ(docs[0]["key99999"], "v99999");
}

TEST(Yaml, FindsDuplicateKeysOfWideMaps) {
  try {
    parseYaml(wideMap(1000, 0) + "key500: again\n");
    FAIL() << "no error";
  } catch (const YamlError& e) {
    EXPECT_STREQ(e.what(), "duplicate key \"key500\" at line 1001, column 1");
  }
}

TEST(Yaml, RefusesMapsWiderThanTheLimitWithTheirPath) {
  const std::string text =
      "spec:\n  objects:\n  - kind: ConfigMap\n    data:\n" + wideMap(10'001, 6);
  try {
    parseYaml(text);
    FAIL() << "no error";
  } catch (const YamlError& e) {
    EXPECT_STREQ(e.what(), "object at /spec/objects/0/data has more than 10000 members (line "
                           "10005, column 7)");
  }
  EXPECT_EQ(parseYaml("spec:\n  objects:\n  - data:\n" +
                      wideMap(10'000, 6))[0]["spec"]["objects"][0]["data"]
                .size(),
            10'000u);
}

TEST(Yaml, RefusesLongerSequencesThanTheLimitWithTheirPath) {
  YamlLimits limits;
  limits.maxItems = 3;
  try {
    parseYaml("a/b:\n  x~y: [1, 2, 3, 4]\n", limits);
    FAIL() << "no error";
  } catch (const YamlError& e) {
    EXPECT_STREQ(e.what(), "array at /a~1b/x~0y has more than 3 items (line 2, column 18)");
  }
}

} // namespace
} // namespace csiop::api
