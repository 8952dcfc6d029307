// The API server's warnings: each a `Warning` response header (RFC 7234 section 5.5, as
// k8s.io/apiserver writes them: `299 - "text"`), for a deprecated API, a field it dropped or did
// not know under fieldValidation Warn, a value it took but that is probably wrong.
#pragma once

#include <string>
#include <string_view>

namespace csiop::kube {

// The text of one Warning header value: `299 - "the text"` -> `the text` (quoted-pair escapes
// undone). A value not in that form is returned as it is, trimmed.
std::string warningText(std::string_view header);

} // namespace csiop::kube
