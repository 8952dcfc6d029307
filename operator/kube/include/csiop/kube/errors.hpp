// Errors of the Kubernetes client.
//
//   ApiError        the API server answered with a non-2xx code (or a watch ERROR event); carries
//                   the HTTP code and the server's metav1.Status (reason, message, causes).
//   TransportError  no usable answer: connect refused, DNS, TLS, timeout, connection closed,
//                   malformed HTTP/JSON. Always worth a retry with backoff.
//   ConfigError     a kubeconfig or in-cluster configuration that cannot be used; the message
//                   names the file and the key.
// Cancellation (asio per-operation cancellation, Watch::cancel) is not an error of these kinds:
// a cancelled request throws boost::system::system_error(asio::error::operation_aborted), as
// every asio operation does.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <csiop/kube/json.hpp>

namespace csiop::kube {

// metav1.StatusCause
struct StatusCause {
  std::string type = {};
  std::string message = {};
  std::string field = {};
};

// metav1.StatusDetails
struct StatusDetails {
  std::string name = {};
  std::string group = {};
  std::string kind = {};
  std::string uid = {};
  std::vector<StatusCause> causes = {};
  std::optional<std::int64_t> retryAfterSeconds = {};
};

// metav1.Status
struct Status {
  std::string status = {}; // "Success" | "Failure"
  std::string message = {};
  std::string reason = {}; // "NotFound", "AlreadyExists", "Conflict", "Invalid", "Expired", ...
  int code = 0;
  StatusDetails details;

  // Tolerant: fields of the wrong type or missing read as empty.
  static Status fromJson(const Json& json);
  // True if the JSON is a Status object (kind: Status).
  static bool isStatus(const Json& json);
};

// The Status for a non-2xx response: the body's Status if it is one, else one synthesized from
// the HTTP code (reason as client-go names it, message from the body's first line).
Status statusFromResponse(int httpCode, std::string_view body);

// HTTP Retry-After as delta-seconds (HTTP dates are not used by the API server).
std::optional<std::chrono::seconds> parseRetryAfter(std::string_view header);

// The longest wait a Retry-After is honoured for: a server that asks for more is asked again
// after this long (an operator that waits minutes on one answer looks hung).
inline constexpr std::chrono::seconds kMaxRetryAfter{60};

class ApiError : public std::runtime_error {
public:
  // context: what was asked, e.g. "GET /api/v1/namespaces/x/configmaps/y".
  ApiError(int code, Status status, std::string context = {},
           std::optional<std::chrono::seconds> retryAfter = std::nullopt);

  int code() const noexcept { return code_; } // HTTP code (Status.code for watch ERROR events)
  const Status& status() const noexcept { return status_; }
  const std::string& reason() const noexcept { return status_.reason; }
  const std::vector<StatusCause>& causes() const noexcept { return status_.details.causes; }
  const std::string& context() const noexcept { return context_; }
  // From the Retry-After header, else Status details.retryAfterSeconds.
  std::optional<std::chrono::seconds> retryAfter() const noexcept { return retryAfter_; }
  // How long the caller waits before it tries again, as the server asked: retryAfter() on a 429
  // or a 5xx (the answers client-go honours it on), at most kMaxRetryAfter; zero otherwise. A
  // retry waits for this or its own backoff, the longer.
  std::chrono::seconds retryWait() const noexcept;

  // As client-go's apierrors: the reason decides; the code decides when the reason is unknown.
  bool isNotFound() const noexcept;
  bool isAlreadyExists() const noexcept;
  bool isConflict() const noexcept; // 409 that is not AlreadyExists (stale resourceVersion, ...)
  bool isGone() const noexcept;     // 410 Gone / Expired: relist
  bool isInvalid() const noexcept;  // 422
  bool isBadRequest() const noexcept;
  bool isUnauthorized() const noexcept;
  bool isForbidden() const noexcept;
  bool isTooManyRequests() const noexcept;
  bool isServerError() const noexcept; // 5xx

private:
  bool reasonIs(std::string_view reason, int code) const noexcept;

  int code_;
  Status status_;
  std::string context_;
  std::optional<std::chrono::seconds> retryAfter_;
};

class TransportError : public std::runtime_error {
public:
  enum class Kind {
    Connect,  // resolve / connect failed
    Tls,      // handshake or certificate verification failed
    Timeout,  // the request's deadline (or a watch's idle timeout) passed
    Closed,   // the peer closed or reset the connection
    Protocol, // malformed HTTP, JSON or watch stream
  };
  TransportError(Kind kind, const std::string& message);
  Kind kind() const noexcept { return kind_; }

private:
  Kind kind_;
};

std::string_view toString(TransportError::Kind kind);

class ConfigError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace csiop::kube
