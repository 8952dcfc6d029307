#!/usr/bin/env bash
# Checks that the runtime stage of the operator image (the last FROM of the
# Dockerfile) installs every Debian package that provides a shared library the
# csi-operator binary links, and that it runs as a numeric non-root USER.
#
#   runtime_libs_test.sh <Dockerfile> <csi-operator binary>
#
# The libraries are mapped to packages on this machine (ldd, then dpkg -S), so
# it has to run on the same Debian release as the image's base, where the
# binary was built: the package names carry the sonames (libfmt9, libssl3...).
set -euo pipefail

fail() {
  echo "runtime_libs_test: FAIL: $*" >&2
  exit 1
}

(($# == 2)) || fail "usage: $0 <Dockerfile> <csi-operator binary>"
dockerfile=$1
binary=$2
[[ -r $dockerfile ]] || fail "cannot read $dockerfile"
[[ -x $binary ]] || fail "not an executable: $binary"
command -v ldd >/dev/null || fail "ldd not found"
command -v dpkg >/dev/null || fail "dpkg not found (the check maps libraries to Debian packages)"

# Packages present in debian:<release>-slim already, so the Dockerfile need not
# name them: libc6 (Essential), libgcc-s1 and libstdc++6 (apt depends on both).
base_packages=(libc6 libgcc-s1 libstdc++6)

# --- The runtime stage: the lines after the last FROM, continuations joined,
# comment lines dropped (Docker drops them too, even inside a continued RUN).
runtime=$(awk '
  /^[[:space:]]*#/ { next }
  { line = line $0 }
  /\\[[:space:]]*$/ { sub(/\\[[:space:]]*$/, " ", line); next }
  { print line; line = "" }
  END { if (line != "") print line }' "$dockerfile" |
  awk 'toupper($1) == "FROM" { stage = "" } { stage = stage $0 "\n" } END { printf "%s", stage }')
[[ -n $runtime ]] || fail "$dockerfile: no FROM"
from=$(head -n1 <<<"$runtime")

# The host release must be the image's, or the package names mean nothing.
image_release=$(sed -nE 's/.*debian:([a-z]+)(-slim)?([@[:space:]].*)?$/\1/p' <<<"$from")
# shellcheck source=/dev/null
host_release=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
if [[ -n $image_release && -n $host_release && $image_release != "$host_release" ]]; then
  fail "the runtime stage is Debian $image_release but this machine is $host_release:" \
    "run the check where the binary was built for the image's release"
fi

# Packages of every `apt-get install` (or `apt install`) in the stage's RUN lines:
# the words after `install` up to the end of the command (&&, ;, |), minus
# options, =version and :arch.
declare -A listed=()
while read -r pkg; do
  [[ -n $pkg ]] && listed[$pkg]=1
done < <(grep -iE '^[[:space:]]*RUN[[:space:]]' <<<"$runtime" |
  sed -E 's/^[[:space:]]*RUN([[:space:]]+--[^[:space:]]+)*[[:space:]]+//I; s/&&|;|\|/\n/g' |
  sed -nE 's/^[[:space:]]*(DEBIAN_FRONTEND=[^[:space:]]+[[:space:]]+)?apt(-get)?[[:space:]](.*[[:space:]])?install[[:space:]]+(.*)$/\4/p' |
  tr -s ' \t' '\n' | grep -v '^-' | sed -E 's/[=:].*$//' || true)

# --- USER: numeric and not 0, so that Kubernetes' runAsNonRoot can verify it
# without an /etc/passwd lookup.
user=$(grep -iE '^[[:space:]]*USER[[:space:]]' <<<"$runtime" | tail -n1 | awk '{print $2}' || true)
[[ -n $user ]] || fail "the runtime stage has no USER (it would run as root)"
uid=${user%%:*}
[[ $uid =~ ^[0-9]+$ ]] || fail "USER $user: the uid must be numeric for runAsNonRoot"
((10#$uid != 0)) || fail "USER $user: the uid must not be 0"
if [[ $user == *:* ]]; then
  gid=${user#*:}
  [[ $gid =~ ^[0-9]+$ ]] || fail "USER $user: the gid must be numeric (no /etc/group entry)"
fi

# --- The binary's libraries and their packages.
# dpkg -S "pkg1, pkg2:amd64: /path"; diversion lines are not owners.
owner_of() {
  local out
  out=$(dpkg -S "$1" 2>/dev/null | grep -v '^diversion by' | head -n1) || return 1
  [[ -n $out ]] || return 1
  out=${out%%: /*}
  tr -d ' ' <<<"$out" | tr ',' '\n' | sed 's/:.*$//' | sort -u
}

# The path as ldd resolved it, then its other merged-/usr spelling, then the
# file the symlink points to in both spellings: dpkg registers just one of them.
package_of() {
  local path=$1 real candidate
  real=$(realpath -e "$path" 2>/dev/null || echo "$path")
  for candidate in "$path" "$real"; do
    owner_of "$candidate" && return 0
    if [[ $candidate == /usr/* ]]; then
      owner_of "${candidate#/usr}" && return 0
    else
      owner_of "/usr$candidate" && return 0
    fi
  done
  return 1
}

# A static binary would need no package, but the build links dynamically: a
# binary ldd cannot read is the wrong file, not a pass.
ldd_out=$(ldd "$binary" 2>&1) || fail "ldd $binary: $ldd_out"
if grep -q 'not found' <<<"$ldd_out"; then
  fail "ldd cannot resolve some libraries of $binary:"$'\n'"$(grep 'not found' <<<"$ldd_out")"
fi

declare -A needed=() # package -> the libraries that need it
while read -r lib path; do
  case $lib in linux-vdso.so.* | linux-gate.so.* | ld-linux*) continue ;; esac
  [[ -n $path ]] || continue
  pkgs=$(package_of "$path") || fail "no Debian package owns $path ($lib)"
  while read -r pkg; do
    needed[$pkg]="${needed[$pkg]:+${needed[$pkg]} }$lib"
  done <<<"$pkgs"
done < <(sed -nE 's/^[[:space:]]*([^[:space:]]+) => ([^[:space:]]+)( \(0x[0-9a-f]+\))?$/\1 \2/p' <<<"$ldd_out")

for pkg in "${base_packages[@]}"; do unset "needed[$pkg]"; done

missing=()
for pkg in $(printf '%s\n' "${!needed[@]}" | sort); do
  [[ -n ${listed[$pkg]:-} ]] || missing+=("$pkg (for ${needed[$pkg]})")
done
if ((${#missing[@]} > 0)); then
  fail "the runtime stage of $dockerfile does not install:"$'\n'"$(printf '  %s\n' "${missing[@]}")"
fi

echo "runtime_libs_test: ok: runtime stage ($from) installs all" \
  "${#needed[@]} packages $(basename "$binary") links" \
  "($(printf '%s\n' "${!needed[@]}" | sort | tr '\n' ' ' | sed 's/ $//')), runs as USER $user"
