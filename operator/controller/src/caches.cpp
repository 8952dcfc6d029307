#include <csiop/controller/caches.hpp>

#include <csiop/render/render.hpp>

namespace csiop::controller {

namespace r = kube::resources;

Caches::Caches(kube::Client& client, const kube::ResourceRef& csiDriverResource)
    : driverDeployments(client, r::driverdeployments), csiDrivers(client, csiDriverResource),
      csiNodes(client, r::csinodes), namespaces(client, r::namespaces),
      pods(client, r::pods, render::kOwnerLabel) {
  for (const auto* ref :
       {&r::serviceaccounts, &r::clusterroles, &r::clusterrolebindings, &r::roles, &r::rolebindings,
        &r::daemonsets, &r::deployments, &r::statefulsets, &r::storageclasses}) {
    // Only objects carrying the owner label: the operator's, never the cluster's.
    children.push_back(std::make_unique<Informer>(client, *ref, render::kOwnerLabel));
  }
}

Informer* Caches::child(const std::string& kind) {
  for (auto& c : children) {
    if (c->resource().kind == kind) {
      return c.get();
    }
  }
  return nullptr;
}

const kube::ResourceRef* Caches::resourceOf(const std::string& kind) {
  if (kind == csiDrivers.resource().kind) {
    return &csiDrivers.resource();
  }
  if (kind == namespaces.resource().kind) {
    return &namespaces.resource();
  }
  const Informer* c = child(kind);
  return c == nullptr ? nullptr : &c->resource();
}

std::vector<Informer*> Caches::all() {
  std::vector<Informer*> out = {&driverDeployments, &csiDrivers, &csiNodes, &namespaces, &pods};
  for (auto& c : children) {
    out.push_back(c.get());
  }
  return out;
}

bool Caches::synced() {
  for (auto* i : all()) {
    if (!i->synced()) {
      return false;
    }
  }
  return true;
}

} // namespace csiop::controller
