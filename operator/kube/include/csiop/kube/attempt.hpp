// An API request's outcome as a value: what it returned, or the ApiError or TransportError it
// failed with. A coroutine cannot co_await inside a catch handler, so code that must answer a
// failure with another request (delete, then create again; a conflict, then a requeue) branches
// on the value instead of catching:
//
//   auto created = co_await attempt(client.create(ref, desired));
//   if (created.alreadyExists()) { ... co_await client.get(...) ... }
//   else if (!created) co_return created.message();
//
// Anything else thrown (a cancelled operation, a bug) passes through.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include <boost/asio/awaitable.hpp>

#include <csiop/kube/errors.hpp>

namespace csiop::kube {

template <class T> class Attempt {
public:
  explicit Attempt(T value) : outcome_(std::move(value)) {}
  explicit Attempt(ApiError error) : outcome_(std::move(error)) {}
  explicit Attempt(TransportError error) : outcome_(std::move(error)) {}

  bool ok() const noexcept { return std::holds_alternative<T>(outcome_); }
  explicit operator bool() const noexcept { return ok(); }

  // Only when ok().
  T& value() { return std::get<T>(outcome_); }
  const T& value() const { return std::get<T>(outcome_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }

  // The server's answer, when it answered with an error.
  const ApiError* apiError() const noexcept { return std::get_if<ApiError>(&outcome_); }
  bool notFound() const noexcept { return apiError() != nullptr && apiError()->isNotFound(); }
  bool alreadyExists() const noexcept {
    return apiError() != nullptr && apiError()->isAlreadyExists();
  }
  bool conflict() const noexcept { return apiError() != nullptr && apiError()->isConflict(); }
  bool invalid() const noexcept { return apiError() != nullptr && apiError()->isInvalid(); }
  // The error's message ("" when ok()).
  std::string message() const {
    if (const auto* e = std::get_if<ApiError>(&outcome_)) {
      return e->what();
    }
    if (const auto* e = std::get_if<TransportError>(&outcome_)) {
      return e->what();
    }
    return {};
  }
  // Throws the error again (only when !ok()).
  [[noreturn]] void rethrow() const {
    if (const auto* e = std::get_if<ApiError>(&outcome_)) {
      throw *e;
    }
    throw std::get<TransportError>(outcome_);
  }

private:
  std::variant<T, ApiError, TransportError> outcome_;
};

template <class T> boost::asio::awaitable<Attempt<T>> attempt(boost::asio::awaitable<T> request) {
  try {
    co_return Attempt<T>(co_await std::move(request));
  } catch (const ApiError& e) {
    co_return Attempt<T>(e);
  } catch (const TransportError& e) {
    co_return Attempt<T>(e);
  }
}

// A request whose answer is not used (or that answers nothing).
inline boost::asio::awaitable<Attempt<std::monostate>>
attempt(boost::asio::awaitable<void> request) {
  try {
    co_await std::move(request);
    co_return Attempt<std::monostate>(std::monostate{});
  } catch (const ApiError& e) {
    co_return Attempt<std::monostate>(e);
  } catch (const TransportError& e) {
    co_return Attempt<std::monostate>(e);
  }
}

} // namespace csiop::kube
