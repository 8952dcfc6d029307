#include "operator_version.hpp"

namespace csiop::cli {

const char* operatorVersion() {
  return CSIOP_VERSION;
}

} // namespace csiop::cli
