#include <csiop/driverdeployment/condition_states.hpp>

#include <csiop/api/json_access.hpp>

namespace csiop::driverdeployment {

ConditionStates conditionStates(const std::vector<const api::Json*>& driverDeployments) {
  ConditionStates out;
  for (const api::Json* dd : driverDeployments) {
    const api::Json& conditions = api::member(api::member(*dd, "status"), "conditions");
    if (!conditions.is_array()) {
      continue;
    }
    for (const api::Json& c : conditions) {
      const std::string type = api::stringField(c, "type");
      if (type.empty()) {
        continue;
      }
      std::string status = api::stringField(c, "status");
      if (status != "True" && status != "False") {
        status = "Unknown";
      }
      out[api::metadataField(*dd, "name")][type] = std::move(status);
    }
  }
  return out;
}

} // namespace csiop::driverdeployment
