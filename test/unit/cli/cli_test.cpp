// The csi-operator command line, run in-process with captured streams.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include <csiop/api/yaml.hpp>
#include <csiop/render/render.hpp>

#include "cli_run.hpp"

namespace csiop {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

const std::string kSrc = CSIOP_SOURCE_DIR;

using Result = test::CliResult;

Result run(std::vector<std::string> args, const std::string& stdinText = "") {
  return test::runCli(std::move(args), stdinText);
}

TEST(Cli, RenderPrintsTheGoldenOutput) {
  const auto r = run({"render", "-f", kSrc + "/examples/hostpath.yaml"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, readFile(kSrc + "/test/golden/hostpath.yaml"));
}

TEST(Cli, RenderReadsStdin) {
  const auto r = run({"render", "-f", "-"}, readFile(kSrc + "/examples/nfs.yaml"));
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, readFile(kSrc + "/test/golden/nfs.yaml"));
}

// Each document's objects in turn; a ClusterRole every driver shares (render::isShared) once.
TEST(Cli, RenderRendersEveryDocumentOfAStream) {
  const auto r = run({"render", "-f", "-"}, readFile(kSrc + "/examples/nfs.yaml") + "---\n" +
                                                readFile(kSrc + "/examples/hostpath.yaml"));
  EXPECT_EQ(r.code, 0);
  std::vector<api::Json> expected = api::parseYaml(readFile(kSrc + "/test/golden/nfs.yaml"));
  std::size_t sharedTwice = 0;
  for (api::Json& object : api::parseYaml(readFile(kSrc + "/test/golden/hostpath.yaml"))) {
    if (render::isShared(object) &&
        std::find(expected.begin(), expected.end(), object) != expected.end()) {
      ++sharedTwice;
      continue;
    }
    expected.push_back(std::move(object));
  }
  EXPECT_GT(sharedTwice, 0u) << "both drivers run the provisioner";
  EXPECT_EQ(api::parseYaml(r.out), expected);
}

TEST(Cli, RenderJsonIsAList) {
  const auto r = run({"render", "-o", "json", "-f", kSrc + "/examples/hostpath.yaml"});
  ASSERT_EQ(r.code, 0);
  const auto list = api::Json::parse(r.out);
  EXPECT_EQ(list["kind"], "List");
  EXPECT_EQ(list["items"].size(),
            api::parseYaml(readFile(kSrc + "/test/golden/hostpath.yaml")).size());
}

void expectFailure(const Result& r, const std::vector<std::string>& errors) {
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "") << "nothing on stdout when the input is bad";
  std::string expected;
  for (const auto& e : errors) {
    expected += "error: " + e + "\n";
  }
  EXPECT_EQ(r.err, expected);
}

TEST(Cli, MalformedYaml) {
  const auto r = run({"render", "-f", "-"}, "spec: [unclosed\n");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("error: invalid YAML at line 2, column 1: ", 0), 0u) << r.err;
}

TEST(Cli, WrongKind) {
  expectFailure(
      run({"render", "-f", "-"}, "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"),
      {R"(expected apiVersion csiop.dev/v1alpha1, kind DriverDeployment; got apiVersion "v1", kind "Pod")"});
}

TEST(Cli, EmptyInput) {
  expectFailure(run({"render", "-f", "-"}, "\n# nothing\n"),
                {"no DriverDeployment found: the input is empty"});
}

TEST(Cli, InvalidSpecListsEveryError) {
  expectFailure(
      run({"render", "-f", "-"}, R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: demo}
spec:
  csiDriver: {fsGroupPolicy: Foo, attachRequired: false}
  driver: {image: x}
  deletionPolicy: Keep
)"),
      {R"(DriverDeployment "demo": spec.driverName: Required value)",
       R"(DriverDeployment "demo": spec.csiDriver.fsGroupPolicy: Unsupported value: "Foo": supported values: "File", "None", "ReadWriteOnceWithFSType")",
       R"(DriverDeployment "demo": spec.deletionPolicy: Unsupported value: "Keep": supported values: "Delete", "Orphan")"});
}

TEST(Cli, ErrorsNameTheirDocument) {
  const std::string good = readFile(kSrc + "/examples/nfs.yaml");
  expectFailure(
      run({"render", "-f", "-"}, good + "---\nkind: Secret\napiVersion: v1\n"),
      {R"(document 2: expected apiVersion csiop.dev/v1alpha1, kind DriverDeployment; got apiVersion "v1", kind "Secret")"});
}

TEST(Cli, TypeErrors) {
  expectFailure(
      run({"render", "-f", "-"}, R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: demo}
spec: {driverName: d.example.com, driver: {image: x}, controller: {replicas: two}}
)"),
      {R"(DriverDeployment "demo": spec.controller.replicas: Invalid value: "two": spec.controller.replicas in body must be of type integer: "string")"});
}

const char* kUnknown = R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: demo}
spec: {driverName: d.example.com, csiDriver: {attachRequired: false}, driver: {image: x}, node: {kubletDir: /x}}
)";

TEST(Cli, UnknownFieldsAreErrorsByDefault) {
  expectFailure(run({"render", "-f", "-"}, kUnknown),
                {R"(DriverDeployment "demo": unknown field "spec.node.kubletDir")"});
}

TEST(Cli, UnknownFieldsCanBeWarnedAboutOrIgnored) {
  auto r = run({"render", "--validate=warn", "-f", "-"}, kUnknown);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(
      r.err,
      "warning: DriverDeployment \"demo\": unknown field \"spec.node.kubletDir\" (ignored)\n");
  EXPECT_NE(r.out.find("kind: DaemonSet"), std::string::npos);
  r = run({"render", "--validate=ignore", "-f", "-"}, kUnknown);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err, "");
}

TEST(Cli, WarningsDoNotFail) {
  const auto r = run({"render", "-f", "-"}, R"(apiVersion: csiop.dev/v1alpha1
kind: DriverDeployment
metadata: {name: demo}
spec: {driverName: d.example.com, driver: {image: x}}
)");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.err.find("warning: DriverDeployment \"demo\": spec.csiDriver.attachRequired is true"),
            std::string::npos);
}

TEST(Cli, MissingFile) {
  const auto r = run({"render", "-f", "/nonexistent/dd.yaml"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: cannot read /nonexistent/dd.yaml: No such file or directory\n");
}

TEST(Cli, UsageErrorsExitWith2) {
  EXPECT_EQ(run({}).code, 2);
  EXPECT_EQ(run({"render"}).code, 2);
  EXPECT_EQ(run({"render", "-f", "x", "--validate=maybe"}).code, 2);
  EXPECT_EQ(run({"frobnicate"}).code, 2);
  const auto help = run({"render", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--filename"), std::string::npos);
}

TEST(Cli, CrdsPrintsTheCheckedInFileExactly) {
  const auto r = run({"crds"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, readFile(kSrc + "/crds/csiop.dev_driverdeployments.yaml"));
}

TEST(Cli, Version) {
  const auto r = run({"version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.rfind("csi-operator ", 0), 0u);
  EXPECT_NE(r.out.find("registry.k8s.io/sig-storage/csi-provisioner:"), std::string::npos);
}

// Every prefix of a valid manifest is either rendered or rejected with an
// error: never a crash, never output together with an error.
TEST(Cli, NeverCrashesOnTruncatedInput) {
  const std::string full = readFile(kSrc + "/examples/hostpath.yaml");
  for (std::size_t n = 0; n <= full.size(); n += 3) {
    const auto r = run({"render", "-f", "-"}, full.substr(0, n));
    ASSERT_TRUE(r.code == 0 || r.code == 1) << n;
    if (r.code == 1) {
      EXPECT_EQ(r.out, "") << n;
      EXPECT_NE(r.err, "") << n;
    }
  }
}

} // namespace
} // namespace csiop
