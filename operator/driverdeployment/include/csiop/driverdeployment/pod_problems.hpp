// Why a DriverDeployment's pods are not running: the waiting reasons of their
// containers (an image that cannot be pulled, a crash loop, a bad config) and
// pods the scheduler cannot place. Pure: reads pods, returns one line each, so
// the status can say why instead of only "0/1 ready".
#pragma once

#include <string>
#include <vector>

#include <csiop/driverdeployment/cached_pod.hpp>

namespace csiop::driverdeployment {

// One line per problem, e.g. `pod ns/name: container csi-driver: ImagePullBackOff: Back-off
// pulling image "x"`, in the order of the pods given. A pod being deleted is skipped: its
// replacement tells the current story.
std::vector<std::string> podProblems(const std::vector<const CachedPod*>& pods);

// The first `limit` problems joined with "; ", then "and N more" (a condition message must stay
// readable and bounded whatever the number of nodes).
std::string summarizeProblems(const std::vector<std::string>& problems, std::size_t limit = 3);

} // namespace csiop::driverdeployment
