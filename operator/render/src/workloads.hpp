// The node plugin DaemonSet and the controller plugin Deployment/StatefulSet.
#pragma once

#include "meta.hpp"

namespace csiop::render {

Json renderNodeDaemonSet(const Effective& e);
Json renderControllerWorkload(const Effective& e); // requires e.controller

} // namespace csiop::render
