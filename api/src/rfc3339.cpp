#include <csiop/api/rfc3339.hpp>

#include <cstdint>
#include <cstdio>

namespace csiop::api {
namespace {

using namespace std::chrono;

// Exactly `width` decimal digits at `at`, advancing it.
std::optional<int> digits(std::string_view text, std::size_t& at, std::size_t width) {
  if (at + width > text.size()) {
    return std::nullopt;
  }
  int value = 0;
  for (std::size_t i = 0; i < width; ++i) {
    const char c = text[at + i];
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    value = value * 10 + (c - '0');
  }
  at += width;
  return value;
}

bool expect(std::string_view text, std::size_t& at, std::string_view one_of) {
  if (at < text.size() && one_of.find(text[at]) != std::string_view::npos) {
    ++at;
    return true;
  }
  return false;
}

} // namespace

std::optional<WallTime> parseRfc3339(std::string_view text) {
  std::size_t at = 0;
  const auto y = digits(text, at, 4);
  const bool dash1 = expect(text, at, "-");
  const auto mo = digits(text, at, 2);
  const bool dash2 = expect(text, at, "-");
  const auto d = digits(text, at, 2);
  const bool t = expect(text, at, "Tt");
  const auto h = digits(text, at, 2);
  const bool colon1 = expect(text, at, ":");
  const auto mi = digits(text, at, 2);
  const bool colon2 = expect(text, at, ":");
  const auto s = digits(text, at, 2);
  if (!y || !mo || !d || !h || !mi || !s || !dash1 || !dash2 || !t || !colon1 || !colon2 ||
      *h > 23 || *mi > 59 || *s > 60) {
    return std::nullopt;
  }
  const year_month_day date{year{*y}, month{static_cast<unsigned>(*mo)},
                            day{static_cast<unsigned>(*d)}};
  if (!date.ok()) {
    return std::nullopt;
  }
  std::int64_t micros = 0;
  if (expect(text, at, ".")) {
    std::size_t n = 0;
    for (; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at, ++n) {
      if (n < 6) {
        micros = micros * 10 + (text[at] - '0');
      }
    }
    if (n == 0) {
      return std::nullopt;
    }
    for (; n < 6; ++n) {
      micros *= 10;
    }
  }
  minutes offset{0};
  if (!expect(text, at, "Zz")) {
    const bool minus = at < text.size() && text[at] == '-';
    if (!expect(text, at, "+-")) {
      return std::nullopt;
    }
    const auto oh = digits(text, at, 2);
    const bool colon = expect(text, at, ":");
    const auto om = digits(text, at, 2);
    if (!oh || !colon || !om || *oh > 23 || *om > 59) {
      return std::nullopt;
    }
    offset = minutes{(*oh * 60 + *om) * (minus ? -1 : 1)};
  }
  if (at != text.size()) {
    return std::nullopt;
  }
  const auto local = sys_days{date} + hours{*h} + minutes{*mi} + seconds{*s} + microseconds{micros};
  return time_point_cast<system_clock::duration>(local - offset);
}

WallTime parseRfc3339OrEpoch(std::string_view text) {
  return parseRfc3339(text).value_or(WallTime{});
}

std::string formatRfc3339(WallTime time) {
  const auto secs = floor<seconds>(time);
  const auto days = floor<std::chrono::days>(secs);
  const year_month_day date{days};
  const hh_mm_ss clock{secs - days};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02lld:%02lld:%02lldZ", int(date.year()),
                unsigned(date.month()), unsigned(date.day()),
                static_cast<long long>(clock.hours().count()),
                static_cast<long long>(clock.minutes().count()),
                static_cast<long long>(clock.seconds().count()));
  return buf;
}

} // namespace csiop::api
