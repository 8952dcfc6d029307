// Checks of PEM data before it reaches the TLS context, so that a bad kubeconfig is reported
// with the file and key that hold it.
#pragma once

#include <string>
#include <string_view>

namespace csiop::kube::detail {

// "" if pem holds at least one X.509 certificate (and nothing unparsable), else why not.
std::string checkCertificates(std::string_view pem);
// "" if pem holds a private key, else why not.
std::string checkPrivateKey(std::string_view pem);
// "" if the key belongs to the (first) certificate, else why not.
std::string checkKeyMatchesCertificate(std::string_view certPem, std::string_view keyPem);

} // namespace csiop::kube::detail
