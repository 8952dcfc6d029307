// Replays every file of webhook/fuzz/corpus through webhook::review and holds
// each answer to the fuzzer's invariants (review_harness.hpp); a file whose name
// starts with allow-, deny400-, deny403-, deny422- or http400- must also get that
// answer (see make_corpus.cpp). Likewise every file of webhook/fuzz/render_corpus
// through render (render_harness.hpp). A crash reproducer committed to a corpus so
// becomes a regression test of the normal build (and of the ASan one).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "render_harness.hpp"
#include "review_harness.hpp"

namespace {

using csiop::api::Json;
namespace fuzz = csiop::webhook::fuzz;

std::vector<std::filesystem::path> corpusFiles(const char* dir = CSIOP_FUZZ_CORPUS_DIR) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The answer a file's name promises: "allow", "deny400", "deny403", "deny422",
// "http400", or "" for none.
std::string promise(const std::string& name) {
  const std::string word = name.substr(0, name.find('-'));
  for (const char* known : {"allow", "deny400", "deny403", "deny422", "http400"}) {
    if (word == known) {
      return word;
    }
  }
  return {};
}

// "" when `answer` is what `word` promises.
std::string expectation(const std::string& word, const csiop::webhook::ReviewResult& answer) {
  if (word == "http400") {
    return answer.httpStatus == 400 ? "" : "expected a plain-text 400";
  }
  if (answer.httpStatus != 200) {
    return "expected an AdmissionReview, got HTTP " + std::to_string(answer.httpStatus);
  }
  const Json response = Json::parse(answer.body).at("response");
  if (word == "allow") {
    return response.at("allowed") == true ? "" : "expected it allowed";
  }
  const int code = std::stoi(word.substr(4));
  return response.at("allowed") == false && response.at("status").at("code") == code
             ? ""
             : "expected it denied with " + std::to_string(code);
}

TEST(FuzzCorpus, EveryInputKeepsTheInvariants) {
  const auto files = corpusFiles();
  ASSERT_FALSE(files.empty()) << "no corpus in " << CSIOP_FUZZ_CORPUS_DIR;
  std::size_t promised = 0;
  for (const auto& path : files) {
    const std::string name = path.filename().string();
    SCOPED_TRACE(name);
    csiop::webhook::ReviewResult answer;
    const std::string broken = fuzz::check(readFile(path), &answer);
    EXPECT_EQ(broken, "");
    if (!broken.empty()) {
      continue;
    }
    const std::string word = promise(name);
    if (!word.empty()) {
      EXPECT_EQ(expectation(word, answer), "") << answer.body;
      ++promised;
    }
  }
  // The seeds reach every decision: the corpus has not gone stale.
  EXPECT_GE(promised, 30u);
}

TEST(FuzzCorpus, EveryRenderInputKeepsTheInvariants) {
  const auto files = corpusFiles(CSIOP_RENDER_CORPUS_DIR);
  ASSERT_FALSE(files.empty()) << "no corpus in " << CSIOP_RENDER_CORPUS_DIR;
  std::size_t rendered = 0;
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    csiop::render::fuzz::RenderOutcome outcome;
    EXPECT_EQ(csiop::render::fuzz::check(readFile(path), &outcome), "");
    // The examples render; the hostile inputs are all refused but the ones that are valid.
    const std::string name = path.filename().string();
    if (name.rfind("example-", 0) == 0) {
      EXPECT_TRUE(outcome.errors.empty()) << outcome.errors.front();
    }
    rendered += outcome.objects.empty() ? 0 : 1;
  }
  EXPECT_GE(rendered, 10u);
}

} // namespace
