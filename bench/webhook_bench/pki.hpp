// Test certificates generated at run time: the unit tests' CA (test/unit/kube/test_pki.hpp).
#pragma once

#include "../../test/unit/kube/test_pki.hpp"

namespace csiop::bench::webhook {

using kube::testing::KeyPair;
using kube::testing::TestPki;

} // namespace csiop::bench::webhook
