#include <csiop/api/sidecar_releases.hpp>

#include <algorithm>
#include <charconv>

#include <csiop/api/command_line.hpp>

#include "sidecar_flag_table.hpp"

namespace csiop::api {
namespace {

// "8" of "8.2.1"; nullopt unless 1-4 decimal digits.
std::optional<int> number(std::string_view s) {
  int n = 0;
  if (s.empty() || s.size() > 4) {
    return std::nullopt;
  }
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size()) {
    return std::nullopt;
  }
  return n;
}

// "v8.2.1" exactly.
std::optional<Version> releaseTag(std::string_view tag) {
  if (tag.size() < 6 || tag[0] != 'v') {
    return std::nullopt;
  }
  tag.remove_prefix(1);
  const std::size_t a = tag.find('.');
  const std::size_t b = a == std::string_view::npos ? a : tag.find('.', a + 1);
  if (b == std::string_view::npos) {
    return std::nullopt;
  }
  const auto major = number(tag.substr(0, a));
  const auto minor = number(tag.substr(a + 1, b - a - 1));
  const auto patch = number(tag.substr(b + 1));
  if (!major || !minor || !patch) {
    return std::nullopt;
  }
  return Version{*major, *minor, *patch};
}

const sidecar_flags::ComponentFlags* flagsOf(Component component) {
  for (const auto& c : sidecar_flags::table()) {
    if (c.component == component) {
      return &c;
    }
  }
  return nullptr;
}

// The known release a release behaves as: itself, or the newest known patch of its minor
// version at or below it (patch releases fix bugs; they have not changed flags), or else the
// oldest known patch of that minor.
std::optional<Version> knownAs(const sidecar_flags::ComponentFlags& c, const Version& v) {
  std::optional<Version> below;
  std::optional<Version> above;
  for (const Version& known : c.releases) {
    if (known.major != v.major || known.minor != v.minor) {
      continue;
    }
    if (known <= v) {
      below = known;
    } else if (!above) {
      above = known;
    }
  }
  return below ? below : above;
}

bool accepts(const sidecar_flags::FlagSpan& span, const Version& v) {
  return span.since <= v && v <= span.until;
}

std::string reasonFor(const sidecar_flags::ComponentFlags& c, const SidecarRelease& release,
                      const std::string& flag) {
  const std::string head = std::string(release.name) + " " + release.version.str() +
                           " has no flag --" + flag +
                           " (\"flag provided but not defined\": the "
                           "container exits at start";
  std::optional<Version> addedAfter;   // the first release after this one that has it
  std::optional<Version> removedAfter; // the last release before this one that had it
  for (const auto& span : c.flags) {
    if (span.flag != flag) {
      continue;
    }
    if (span.since > release.version && (!addedAfter || span.since < *addedAfter)) {
      addedAfter = span.since;
    }
    if (span.until < release.version && (!removedAfter || span.until > *removedAfter)) {
      removedAfter = span.until;
    }
  }
  if (addedAfter) {
    return head + "; it came in " + addedAfter->str() + ")";
  }
  if (removedAfter) {
    // The first known release after the last one that had it.
    const auto next = std::upper_bound(c.releases.begin(), c.releases.end(), *removedAfter);
    return head + "; " + std::string(release.name) + " " + removedAfter->str() +
           " was the last release with it" +
           (next != c.releases.end() ? ", " + next->str() + " the first without" : "") + ")";
  }
  return head + "; no release from " + c.releases.front().str() + " to " + c.releases.back().str() +
         " has it)";
}

} // namespace

std::string Version::str() const {
  return "v" + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::optional<SidecarRelease> sidecarRelease(std::string_view image) {
  if (const std::size_t at = image.find('@'); at != std::string_view::npos) {
    image = image.substr(0, at);
  }
  const std::size_t slash = image.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? image : image.substr(slash + 1);
  const std::size_t colon = last.find(':');
  if (colon == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view name = last.substr(0, colon);
  const auto version = releaseTag(last.substr(colon + 1));
  if (!version) {
    return std::nullopt;
  }
  for (const ImageDefault& d : imageDefaults()) {
    if (d.name == name) {
      return SidecarRelease{d.component, d.name, *version};
    }
  }
  return std::nullopt;
}

std::optional<std::vector<UnknownFlag>> unknownFlags(const SidecarRelease& release,
                                                     const std::vector<std::string>& args) {
  const sidecar_flags::ComponentFlags* c = flagsOf(release.component);
  if (c == nullptr) {
    return std::nullopt;
  }
  const auto known = knownAs(*c, release.version);
  if (!known) {
    return std::nullopt;
  }
  std::vector<UnknownFlag> out;
  for (const FlagArgument& arg : flagArguments(args)) {
    if (c->pflag && arg.dashes == 1 && arg.name.size() > 1) {
      out.push_back({arg.index, arg.name,
                     std::string(release.name) + " reads its flags with pflag, where -" + arg.name +
                         " is a run of one-letter flags (\"unknown shorthand flag\": "
                         "the container exits at start); write --" +
                         arg.name});
      continue;
    }
    const bool accepted = std::any_of(c->flags.begin(), c->flags.end(), [&](const auto& span) {
      return span.flag == arg.name && accepts(span, *known);
    });
    if (!accepted) {
      out.push_back({arg.index, arg.name, reasonFor(*c, release, arg.name)});
    }
  }
  return out;
}

std::optional<std::pair<Version, Version>> knownReleases(Component component) {
  const sidecar_flags::ComponentFlags* c = flagsOf(component);
  if (c == nullptr || c->releases.empty()) {
    return std::nullopt;
  }
  return std::pair{c->releases.front(), c->releases.back()};
}

} // namespace csiop::api
