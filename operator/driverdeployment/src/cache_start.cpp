#include <csiop/driverdeployment/cache_start.hpp>

#include <algorithm>

namespace csiop::driverdeployment {

std::vector<std::vector<runtime::RunnableCache*>> cacheStartGroups(Caches& caches) {
  const std::vector<runtime::RunnableCache*> last = {&caches.provisioningFailures,
                                                     &caches.attachFailures, &caches.mountFailures};
  std::vector<runtime::RunnableCache*> first;
  for (runtime::RunnableCache* cache : caches.all()) {
    if (std::find(last.begin(), last.end(), cache) == last.end()) {
      first.push_back(cache);
    }
  }
  return {first, last};
}

bool groupSynced(const std::vector<runtime::RunnableCache*>& group) {
  return std::all_of(group.begin(), group.end(),
                     [](const runtime::RunnableCache* c) { return c->synced(); });
}

} // namespace csiop::driverdeployment
