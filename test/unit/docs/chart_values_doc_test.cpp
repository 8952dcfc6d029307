// The chart's README lists every value values.yaml has: a value added to the chart cannot go
// undocumented. Values that pass a Kubernetes object through whole (resources, the security
// contexts, a cert-manager issuerRef) are listed by their own name, not by their fields.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <csiop/api/yaml.hpp>

namespace csiop {
namespace {

namespace fs = std::filesystem;

const fs::path kChart = fs::path(CSIOP_SOURCE_DIR) / "charts" / "csi-operator";

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Values whose content is a Kubernetes object, field or label map passed on as written.
const std::set<std::string> kPassedThrough = {"resources", "podSecurityContext", "securityContext",
                                              "webhook.certManager.issuerRef",
                                              "metrics.grafanaDashboard.labels"};

// Every value's dotted path: the leaves, and the maps passed through whole.
void collectPaths(const api::Json& node, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, value] : node.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object() && !value.empty() && !kPassedThrough.contains(path)) {
      collectPaths(value, path, out);
    } else {
      out.push_back(path);
    }
  }
}

// The table's rows: "| `image.repository` / `tag` / `digest` | ..." names image.repository,
// image.tag and image.digest (a bare name after a dotted one shares its parent).
std::set<std::string> documentedPaths(const std::string& readme) {
  std::set<std::string> paths;
  std::size_t lineStart = 0;
  while (lineStart < readme.size()) {
    std::size_t lineEnd = readme.find('\n', lineStart);
    if (lineEnd == std::string::npos) {
      lineEnd = readme.size();
    }
    const std::string line = readme.substr(lineStart, lineEnd - lineStart);
    lineStart = lineEnd + 1;
    if (!line.starts_with("| `")) {
      continue;
    }
    const std::string firstCell = line.substr(2, line.find(" |", 2) - 2);
    std::string parent;
    for (std::size_t open = firstCell.find('`'); open != std::string::npos;
         open = firstCell.find('`', open + 1)) {
      const std::size_t close = firstCell.find('`', open + 1);
      if (close == std::string::npos) {
        break;
      }
      const std::string name = firstCell.substr(open + 1, close - open - 1);
      const std::size_t dot = name.rfind('.');
      if (dot != std::string::npos) {
        parent = name.substr(0, dot + 1);
        paths.insert(name);
      } else {
        paths.insert(parent + name);
      }
      open = close;
    }
  }
  return paths;
}

TEST(Docs, ChartReadmeListsEveryValue) {
  const std::vector<api::Json> documents = api::parseYaml(readFile(kChart / "values.yaml"));
  ASSERT_EQ(documents.size(), 1U);
  std::vector<std::string> values;
  collectPaths(documents.front(), "", values);
  ASSERT_GT(values.size(), 50U) << "values.yaml was not read";

  const std::set<std::string> documented = documentedPaths(readFile(kChart / "README.md"));
  for (const std::string& value : values) {
    EXPECT_TRUE(documented.contains(value))
        << "`" << value
        << "` is in values.yaml but not in the table of charts/csi-operator/README.md";
  }
}

TEST(Docs, ChartValuesTableNamesNoValueThatIsGone) {
  const std::vector<api::Json> documents = api::parseYaml(readFile(kChart / "values.yaml"));
  ASSERT_EQ(documents.size(), 1U);
  std::vector<std::string> values;
  collectPaths(documents.front(), "", values);
  const std::set<std::string> known(values.begin(), values.end());
  for (const std::string& documented : documentedPaths(readFile(kChart / "README.md"))) {
    bool isValueOrParent = known.contains(documented);
    for (const std::string& value : values) {
      isValueOrParent = isValueOrParent || value.starts_with(documented + ".");
    }
    EXPECT_TRUE(isValueOrParent) << "the chart's README documents `" << documented
                                 << "`, which values.yaml does not have";
  }
}

} // namespace
} // namespace csiop
