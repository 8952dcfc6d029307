#include <csiop/driverdeployment/pod_problems.hpp>

#include <algorithm>
#include <array>
#include <string_view>

namespace csiop::driverdeployment {
namespace {

// Waiting reasons that do not cure themselves by waiting (the kubelet's and the runtime's).
constexpr std::array<std::string_view, 8> kStuckReasons = {
    "ErrImagePull",     "ImagePullBackOff",           "InvalidImageName",     "ErrImageNeverPull",
    "CrashLoopBackOff", "CreateContainerConfigError", "CreateContainerError", "RunContainerError"};

constexpr std::size_t kMaxDetail = 240; // characters of a kubelet message kept per problem

std::string clipped(std::string s) {
  if (s.size() > kMaxDetail) {
    s.resize(kMaxDetail);
    s += "...";
  }
  return s;
}

void containerProblems(const std::string& pod, const CachedPod::WaitingContainer& c,
                       std::vector<std::string>& out) {
  if (std::find(kStuckReasons.begin(), kStuckReasons.end(), c.reason) == kStuckReasons.end()) {
    return;
  }
  std::string line = pod + ": container " + c.name + ": " + c.reason;
  if (!c.message.empty()) {
    line += ": " + clipped(c.message);
  }
  out.push_back(std::move(line));
}

} // namespace

std::vector<std::string> podProblems(const std::vector<const CachedPod*>& pods) {
  std::vector<std::string> out;
  for (const CachedPod* p : pods) {
    if (p == nullptr || p->deleting) {
      continue;
    }
    const std::string name = "pod " + p->key();
    if (p->unschedulable) {
      out.push_back(name + ": unschedulable: " + clipped(*p->unschedulable));
    }
    for (const CachedPod::WaitingContainer& c : p->waiting) {
      containerProblems(name, c, out);
    }
  }
  return out;
}

std::string summarizeProblems(const std::vector<std::string>& problems, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < problems.size() && i < limit; ++i) {
    out += (out.empty() ? "" : "; ") + problems[i];
  }
  if (problems.size() > limit) {
    out += "; and " + std::to_string(problems.size() - limit) + " more";
  }
  return out;
}

} // namespace csiop::driverdeployment
