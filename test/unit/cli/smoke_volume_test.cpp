// `csi-operator smoke-volume`, run in-process on directories of the test's own.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "cli_run.hpp"

namespace csiop {
namespace {

namespace fs = std::filesystem;

class SmokeVolume : public ::testing::Test {
protected:
  void SetUp() override {
    root = fs::temp_directory_path() /
           ("csiop-smoke-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root / "volume");
    log = (root / "termination-log").string();
  }
  void TearDown() override { fs::remove_all(root); }

  test::CliResult smoke(const std::string& dir, const std::string& nonce = "n0nce-1") {
    return test::runCli({"smoke-volume", dir, "--nonce", nonce, "--termination-log", log});
  }

  std::string terminationLog() const {
    std::ifstream in(log);
    return {std::istreambuf_iterator<char>(in), {}};
  }

  fs::path root;
  std::string log;
};

TEST_F(SmokeVolume, WritesReadsBackAndLeavesNothing) {
  const auto r = smoke((root / "volume").string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "Write: ok (34 bytes, synced)\nRead: ok\nCleanup: ok\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(terminationLog(), "Write: ok (34 bytes, synced)\nRead: ok\nCleanup: ok\n");
  EXPECT_TRUE(fs::is_empty(root / "volume"));
}

TEST_F(SmokeVolume, ANonceOnTheVolumeAlreadyFailsTheWriteAndIsLeftAlone) {
  const fs::path existing = root / "volume" / ".csi-operator-smoke-n0nce-1";
  std::ofstream(existing) << "someone else's";
  const auto r = smoke((root / "volume").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  const std::string expected = "Write: creating " + existing.string() + ": File exists";
  EXPECT_EQ(r.err, "error: " + expected + "\n");
  EXPECT_EQ(terminationLog(), expected);
  EXPECT_TRUE(fs::exists(existing));
}

TEST_F(SmokeVolume, NoVolumeMountedThereFailsTheWrite) {
  const auto r = smoke((root / "missing").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(terminationLog().find("Write: creating "), std::string::npos);
  EXPECT_NE(terminationLog().find("No such file or directory"), std::string::npos);
}

TEST_F(SmokeVolume, AFileWhereTheVolumeShouldBeFailsTheWrite) {
  std::ofstream(root / "file") << "x";
  const auto r = smoke((root / "file").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("Not a directory"), std::string::npos);
}

TEST_F(SmokeVolume, AnUnwritableTerminationLogIsNotTheVolumesFault) {
  log = (root / "no-such-dir" / "log").string();
  const auto r = smoke((root / "volume").string());
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(SmokeVolume, TheNonceMustBeAPlainName) {
  for (const std::string& nonce :
       std::vector<std::string>{"", "../escape", "a b", std::string(129, 'x')}) {
    const auto r = smoke((root / "volume").string(), nonce);
    EXPECT_EQ(r.code, 2) << nonce;
    EXPECT_NE(r.err.find("--nonce"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(fs::is_empty(root / "volume"));
  EXPECT_EQ(smoke((root / "volume").string(), std::string(128, 'x')).code, 0);
}

} // namespace
} // namespace csiop
