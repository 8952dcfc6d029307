// Fake (kwok) nodes added beside a cluster's real node for one test, where a test needs more
// nodes than the machine has (a verified rollout's batches). kwok plays their kubelets, and
// registration_stand_in.hpp their plugin registration (a stand-in: upstream has none).
//
// The nodes carry the taint csiop.dev/test-pool=fake:NoSchedule, so that only pods tolerating
// every taint (node plugins do by default) land on them, and the label csiop.dev/test-pool=fake.
// They are removed, with their pods and CSINodes, when the object goes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "registration_stand_in.hpp"

namespace csiop::e2e {

class FakeNodes {
public:
  // Creates `count` nodes named <prefix>-0.. and waits until they are Ready; throws E2EError
  // when they are not within a minute. Each carries also a NoSchedule taint of each of
  // `startupTaints` (the keys a node pool would register its nodes with).
  FakeNodes(const std::string& prefix, int count,
            const std::vector<std::string>& startupTaints = {});
  ~FakeNodes();
  FakeNodes(const FakeNodes&) = delete;
  FakeNodes& operator=(const FakeNodes&) = delete;

  const std::vector<std::string>& names() const { return names_; }

private:
  void remove();

  std::vector<std::string> names_;
  std::optional<RegistrationStandIn> registration_;
};

} // namespace csiop::e2e
