// The string formats' scanners: the same answers as the regular expressions their messages quote
// (std::regex, here only, as the reference: on every short string over a set of pieces that
// reaches every branch), and answers, in one pass, on the long inputs that made a backtracking
// matcher take seconds, forever, or the stack.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <csiop/api/formats.hpp>

namespace csiop::api::formats {
namespace {

// Every concatenation of at most `count` of `pieces` (with repetition), the empty one included.
void eachString(const std::vector<std::string>& pieces, std::size_t count,
                const std::function<void(const std::string&)>& visit) {
  std::vector<std::size_t> at;
  std::string s;
  for (;;) {
    s.clear();
    for (const std::size_t i : at) {
      s += pieces[i];
    }
    visit(s);
    // The next combination, as an odometer whose length grows.
    std::size_t k = 0;
    while (k < at.size() && at[k] + 1 == pieces.size()) {
      at[k++] = 0;
    }
    if (k == at.size()) {
      if (at.size() == count) {
        return;
      }
      at.push_back(0);
    } else {
      ++at[k];
    }
  }
}

bool mentionsPattern(const std::vector<std::string>& errors) {
  for (const auto& e : errors) {
    if (e.find("regex used for validation") != std::string::npos) {
      return true;
    }
  }
  return false;
}

bool has(const std::vector<std::string>& errors, const std::string& message) {
  return std::find(errors.begin(), errors.end(), message) != errors.end();
}

// The scanner agrees with `pattern` on every string of the pieces.
void agrees(const char* pattern, const std::vector<std::string>& pieces, std::size_t count,
            const std::function<bool(const std::string&)>& scanner) {
  const std::regex re(pattern);
  std::size_t strings = 0;
  eachString(pieces, count, [&](const std::string& s) {
    ++strings;
    ASSERT_EQ(scanner(s), std::regex_match(s, re)) << pattern << " on \"" << s << "\"";
  });
  EXPECT_GT(strings, 1000u);
}

TEST(Formats, LabelIsItsPattern) {
  agrees("[a-z0-9]([-a-z0-9]*[a-z0-9])?", {"a", "0", "-", ".", "A", "_"}, 6,
         [](const std::string& s) { return !mentionsPattern(dns1123Label(s)); });
}

TEST(Formats, SubdomainIsItsPattern) {
  agrees("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
         {"a", "0", "-", ".", "A"}, 7,
         [](const std::string& s) { return !mentionsPattern(dns1123Subdomain(s)); });
}

TEST(Formats, QualifiedNameIsItsPattern) {
  agrees("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]", {"a", "Z", "0", "-", "_", ".", "#"}, 6,
         [](const std::string& s) { return !s.empty() && !mentionsPattern(qualifiedName(s)); });
}

TEST(Formats, LabelValueIsItsPattern) {
  agrees("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", {"a", "Z", "0", "-", "_", ".", "#"}, 6,
         [](const std::string& s) { return !mentionsPattern(labelValue(s)); });
}

TEST(Formats, PortNameIsItsPatterns) {
  const std::vector<std::string> pieces = {"a", "0", "-", "A", "\n", "\r"};
  agrees("[-a-z0-9]+", pieces, 6, [](const std::string& s) {
    return !has(portName(s),
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  });
  agrees(".*[a-z].*", pieces, 6, [](const std::string& s) {
    return !has(portName(s), "must contain at least one letter (a-z)");
  });
}

TEST(Formats, QuantityIsItsPattern) {
  agrees("[+-]?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))"
         "(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?",
         {"1", ".", "e", "E", "+", "-", "K", "i", "m", "x"}, 5,
         [](const std::string& s) { return isQuantity(s); });
}

TEST(Formats, WindowsPathIsItsPattern) {
  agrees(R"(^[A-Za-z]:\\([^\\/:*?"<>|\t\n]+\\?)*$)",
         {"C:\\", "C", ":", "\\", "a", "*", "/", "\t", "\xC3\xA9"}, 5, [](const std::string& s) {
           // The '..' rule is not the pattern's: only strings without dots here.
           return windowsAbsolutePath(s);
         });
  EXPECT_FALSE(windowsAbsolutePath("C:\\a\\..\\b"));
  EXPECT_FALSE(windowsAbsolutePath("C:\\a\\.."));
  EXPECT_TRUE(windowsAbsolutePath("C:\\a\\..b\\c.."));
}

TEST(Formats, CsiProxyApiIsItsPattern) {
  agrees("^[a-z][a-z0-9]*(-[a-z][a-z0-9]*)*-v[0-9]+((alpha|beta)[0-9]+)?$",
         {"a", "v", "1", "-", "beta", "alpha", "x2", "V"}, 5,
         [](const std::string& s) { return csiProxyApi(s); });
}

// The old matcher, a regular expression applied repeatedly: the reference for the scanner.
std::optional<double> goDurationByRegex(const std::string& s) {
  static const std::regex re("([0-9]*(\\.[0-9]*)?)(ns|us|\xC2\xB5s|ms|s|m|h)");
  if (s == "0") {
    return 0.0;
  }
  if (s.empty()) {
    return std::nullopt;
  }
  double total = 0;
  std::string rest = s;
  std::smatch m;
  while (!rest.empty()) {
    if (!std::regex_search(rest, m, re, std::regex_constants::match_continuous) ||
        m[1].str().empty() || m[1].str() == ".") {
      return std::nullopt;
    }
    const std::map<std::string, double> scale = {{"ns", 1e-9}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6},
                                                 {"ms", 1e-3}, {"s", 1},     {"m", 60},
                                                 {"h", 3600}};
    total += std::stod(m[1].str()) * scale.at(m[3].str());
    rest = m.suffix().str();
  }
  return total;
}

TEST(Formats, GoDurationIsItsPattern) {
  std::size_t strings = 0;
  eachString({"1", "5", ".", "n", "s", "m", "h", "u", "\xC2\xB5", "x"}, 5,
             [&](const std::string& s) {
               ++strings;
               ASSERT_EQ(goDuration(s), goDurationByRegex(s)) << "\"" << s << "\"";
             });
  EXPECT_GT(strings, 10000u);
  EXPECT_EQ(goDuration("1h30m"), 5400);
  EXPECT_EQ(goDuration("1.5s"), 1.5);
}

TEST(Formats, GoDurationStopsWhereGoDoes) {
  EXPECT_EQ(goDuration("2562047h"), 2562047.0 * 3600); // Go's largest whole hours
  EXPECT_EQ(goDuration("2562048h"), std::nullopt);
  EXPECT_EQ(goDuration("9999999999999h"), std::nullopt);
  EXPECT_EQ(goDuration("1" + std::string(400, '0') + "s"), std::nullopt); // beyond a double
}

// --- worst cases: long inputs, each answered (correctly) in one pass ---

const std::size_t kLong = 100'000;

TEST(Formats, LongNamesAreTooLongAndNothingWorse) {
  const std::string name(kLong, 'a');
  EXPECT_EQ(dns1123Label(name).size(), 2u); // too long; and longer than any match is refused
  EXPECT_EQ(dns1123Subdomain(name + "." + name).size(), 2u);
  EXPECT_EQ(qualifiedName("a/" + name).size(), 2u);
  EXPECT_EQ(labelValue(std::string(kLong, '-')).size(), 2u);
  EXPECT_FALSE(portName(std::string(kLong, 'a')).empty());
  EXPECT_FALSE(isQuantity(std::string(200'000, '9')));
  EXPECT_FALSE(isQuantity("1" + std::string(kLong, '.')));
  EXPECT_EQ(goDuration(std::string(kLong, '1') + "s"), std::nullopt);
}

TEST(Formats, WindowsPathBacktrackersAnswer) {
  for (const std::size_t n : {24u, 30u, 60u, 100'000u}) {
    EXPECT_FALSE(windowsAbsolutePath("C:\\" + std::string(n, 'a') + "*")) << n;
    EXPECT_TRUE(windowsAbsolutePath("C:\\" + std::string(n, 'a'))) << n;
  }
  std::string deep = "C:";
  for (std::size_t i = 0; i < 25'000; ++i) {
    deep += "\\dir";
  }
  EXPECT_TRUE(windowsAbsolutePath(deep));
  EXPECT_FALSE(windowsAbsolutePath(deep + "\\\\x"));
}

TEST(Formats, LongCsiProxyApiAnswers) {
  // 40 KB that the CRD's own pattern matches: a recursive matcher overflowed the stack on it.
  std::string name = "a";
  for (int i = 0; i < 20'000; ++i) {
    name += "-a";
  }
  EXPECT_TRUE(csiProxyApi(name + "-v1"));
  EXPECT_TRUE(csiProxyApi(name + "-v1beta2"));
  EXPECT_FALSE(csiProxyApi(name + "-v1gamma2"));
  EXPECT_FALSE(csiProxyApi(name + "--v1"));
  EXPECT_FALSE(csiProxyApi(name));
}

} // namespace
} // namespace csiop::api::formats
