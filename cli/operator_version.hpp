// The operator's version: what `csi-operator version` prints and what each workload it writes
// is stamped with (csiop.dev/rendered-by). Defined in operator_version.cpp, the one file built
// with CSIOP_VERSION.
#pragma once

namespace csiop::cli {

const char* operatorVersion();

} // namespace csiop::cli
