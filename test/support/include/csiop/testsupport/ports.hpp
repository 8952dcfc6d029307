// Loopback ports for the servers a test or a benchmark starts (the operator's metrics and
// health probes, a webhook).
#pragma once

namespace csiop::testsupport {

// A loopback TCP port that was free a moment ago (bound to port 0, then released). Throws
// std::runtime_error if none can be had.
int freeLoopbackPort();

} // namespace csiop::testsupport
