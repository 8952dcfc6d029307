// Every relative link in the project's Markdown resolves: to a file or folder that exists and,
// with a #fragment, to a heading of that page (GitHub's anchors). Moving a page or renaming a
// heading cannot leave a dead link behind.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace csiop {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = CSIOP_SOURCE_DIR;

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The anchor GitHub gives a heading: lower case, spaces to hyphens, other punctuation dropped.
std::string anchorOf(const std::string& heading) {
  std::string anchor;
  for (const char c : heading) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_') {
      anchor += static_cast<char>(std::tolower(u));
    } else if (c == ' ') {
      anchor += '-';
    }
  }
  return anchor;
}

std::set<std::string> anchorsOf(const std::string& page) {
  std::set<std::string> anchors;
  bool fenced = false;
  std::size_t start = 0;
  while (start < page.size()) {
    auto end = page.find('\n', start);
    if (end == std::string::npos) {
      end = page.size();
    }
    const std::string line = page.substr(start, end - start);
    start = end + 1;
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
    } else if (!fenced && line.rfind('#', 0) == 0) {
      const auto text = line.find_first_not_of('#');
      if (text != std::string::npos && line[text] == ' ') {
        anchors.insert(anchorOf(line.substr(text + 1)));
      }
    }
  }
  return anchors;
}

// The targets of inline links `[text](target)` outside code fences and code spans.
std::vector<std::string> linksOf(const std::string& page) {
  std::vector<std::string> links;
  bool fenced = false;
  bool inCode = false;
  for (std::size_t i = 0; i < page.size(); ++i) {
    if (page.compare(i, 3, "```") == 0 && (i == 0 || page[i - 1] == '\n')) {
      fenced = !fenced;
      i += 2;
      continue;
    }
    if (fenced) {
      continue;
    }
    if (page[i] == '`') {
      inCode = !inCode;
    } else if (page[i] == '\n' && i + 1 < page.size() && page[i + 1] == '\n') {
      inCode = false; // a code span never crosses a paragraph
    } else if (!inCode && page.compare(i, 2, "](") == 0) {
      const auto close = page.find(')', i + 2);
      if (close != std::string::npos) {
        links.push_back(page.substr(i + 2, close - i - 2));
      }
    }
  }
  return links;
}

std::vector<fs::path> pages() {
  std::vector<fs::path> found;
  for (const char* top : {"README.md", "CONTRIBUTING.md", "CHANGELOG.md"}) {
    found.push_back(kRoot / top);
  }
  for (const char* dir : {"docs", "charts", "test", "bench"}) {
    for (const auto& entry : fs::recursive_directory_iterator(kRoot / dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".md" &&
          entry.path().string().find("/golden/") == std::string::npos) {
        found.push_back(entry.path());
      }
    }
  }
  return found;
}

TEST(Docs, EveryRelativeLinkResolves) {
  int checked = 0;
  for (const auto& page : pages()) {
    const std::string text = readFile(page);
    for (const auto& link : linksOf(text)) {
      if (link.rfind("http://", 0) == 0 || link.rfind("https://", 0) == 0 ||
          link.rfind("mailto:", 0) == 0) {
        continue;
      }
      const auto hash = link.find('#');
      const std::string file = link.substr(0, hash);
      const fs::path target = file.empty() ? page : page.parent_path() / file;
      const auto where = fs::relative(page, kRoot).string() + ": " + link;
      ++checked;
      if (!fs::exists(target)) {
        ADD_FAILURE() << where << ": no such file";
        continue;
      }
      if (hash != std::string::npos && fs::is_regular_file(target)) {
        const auto anchors = anchorsOf(readFile(target));
        EXPECT_TRUE(anchors.count(link.substr(hash + 1)) == 1) << where << ": no such heading";
      }
    }
  }
  EXPECT_GT(checked, 30); // the scan found the links at all
}

} // namespace
} // namespace csiop
