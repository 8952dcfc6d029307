#include <csiop/driverdeployment/registration_clock.hpp>

#include <algorithm>

namespace csiop::driverdeployment {
namespace {

bool lists(const CachedCSINode* csiNode, const std::string& driver) {
  return csiNode != nullptr && std::find(csiNode->drivers.begin(), csiNode->drivers.end(),
                                         driver) != csiNode->drivers.end();
}

} // namespace

void RegistrationClock::observe(const CachedCSINode* old, const CachedCSINode* updated,
                                api::WallTime now) {
  if (updated == nullptr) {
    if (old != nullptr) {
      since_.erase(old->name);
    }
    return;
  }
  const auto node = since_.find(updated->name);
  if (node != since_.end()) {
    std::erase_if(node->second, [&](const auto& entry) { return !lists(updated, entry.first); });
  }
  if (old == nullptr) {
    if (node != since_.end() && node->second.empty()) {
      since_.erase(node);
    }
    return; // listed when first seen: no stamp
  }
  for (const std::string& driver : updated->drivers) {
    if (!lists(old, driver)) {
      since_[updated->name][driver] = now;
    }
  }
  if (const auto it = since_.find(updated->name); it != since_.end() && it->second.empty()) {
    since_.erase(it);
  }
}

NodeRegistration RegistrationClock::of(const CachedCSINode* csiNode,
                                       const std::string& driver) const {
  NodeRegistration out;
  out.listed = lists(csiNode, driver);
  if (out.listed) {
    if (const auto node = since_.find(csiNode->name); node != since_.end()) {
      if (const auto it = node->second.find(driver); it != node->second.end()) {
        out.since = it->second;
      }
    }
  }
  return out;
}

std::size_t RegistrationClock::size() const {
  std::size_t n = 0;
  for (const auto& [node, drivers] : since_) {
    n += drivers.size();
  }
  return n;
}

} // namespace csiop::driverdeployment
