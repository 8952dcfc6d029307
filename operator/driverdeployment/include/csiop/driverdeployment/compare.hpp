// Does a live object already hold everything the operator would apply?
//
// Server-side apply only touches the fields it names, so the live object is
// allowed to carry more: server defaults, fields of other managers, status.
// `contains(live, desired)` is true when every field of `desired` is present
// in `live` with an equal value, where
//  * lists that Kubernetes merges by key (containers by name, ports by
//    containerPort, ...) are matched item by item on that key, and items other
//    managers added are ignored; every other list must match exactly;
//  * resource quantities compare by value ("0.5" == "500m", "1Gi" == "1024Mi").
// When it holds, a reconcile issues no write.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <csiop/api/types.hpp>

namespace csiop::driverdeployment {

using api::Json;

bool contains(const Json& live, const Json& desired);

// The first path at which `live` lacks `desired`, for logs ("" when contains()).
std::string firstDifference(const Json& live, const Json& desired);
// The paths at which `live` lacks `desired`, in order, at most `max` of them.
std::vector<std::string> differences(const Json& live, const Json& desired, std::size_t max);

// JSON equality regardless of object key order (the API server returns keys
// sorted, the operator writes them in declaration order).
bool sameJson(const Json& a, const Json& b);

// Whether two versions of an object differ in their status alone (and the resourceVersion
// and managers that come with any write): the echo of a status write, which a DriverDeployment
// need not be reconciled for (as controller-runtime's GenerationChangedPredicate, but a change
// of labels, annotations, finalizers or deletion still counts).
bool onlyStatusDiffers(const Json& before, const Json& after);

// Numeric value of a Kubernetes quantity ("100m", "1.5Gi", "2e3"); nullopt if malformed.
std::optional<long double> quantityValue(const std::string& quantity);

} // namespace csiop::driverdeployment
