# shellcheck shell=bash
# Shared helpers for test/cluster/* scripts. Sourced, not executed.

CLUSTER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "${CLUSTER_DIR}/versions.env"

# Build with the machine's Go only, statically, never reaching for a toolchain download.
export GOTOOLCHAIN=local
export CGO_ENABLED=0

# Bump when the build recipe (flags, tags, outputs) changes, so caches keyed by
# the old recipe are not reused.
CSIOP_BUILD_RECIPE=2

# Binaries every cache entry must contain.
CSIOP_BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy
  etcd helm kwok kwokctl)

# The real images the node runs, as docker-style archives (see `images`): CSIOP_IMAGE_ARCHIVES,
# else the directory shared/upstream-images beside the checkout when there is one (where a
# machine that reaches no registry keeps the kubernetes-csi images); set it empty for none.
if [[ -z ${CSIOP_IMAGE_ARCHIVES+set} && -d "${CLUSTER_DIR}/../../../shared/upstream-images" ]]; then
  CSIOP_IMAGE_ARCHIVES=$(cd "${CLUSTER_DIR}/../../../shared/upstream-images" && pwd)
  export CSIOP_IMAGE_ARCHIVES
fi

log() { printf '[%s] %s\n' "${0##*/}" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

cache_root() { printf '%s\n' "${CSIOP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/csi-operator}"; }

# Cache key: all pinned versions, readable, plus a short hash over the pinned
# values (but PROMETHEUS_OPERATOR_VERSION and PROMETHEUS_VERSION: nothing of the control plane is
# built from them; and OLDEST_K8S_VERSION, whose build is cached on its own: oldest_bin_dir), the
# wrapper modules' go.mod/go.sum and the recipe revision, so any change to what
# gets built yields a new key.
cache_key() {
  local h
  h=$(
    {
      grep -E '^[A-Z0-9_]+=' "${CLUSTER_DIR}/versions.env" \
        | grep -Ev '^(PROMETHEUS(_OPERATOR)?|OLDEST_K8S)_VERSION='
      cat "${CLUSTER_DIR}/k8s/go.mod" "${CLUSTER_DIR}/k8s/go.sum" \
        "${CLUSTER_DIR}/etcd/go.mod" "${CLUSTER_DIR}/etcd/go.sum"
      echo "recipe=${CSIOP_BUILD_RECIPE}"
    } | sha256sum | cut -c1-10
  )
  printf 'k8s-%s_etcd-%s_helm-%s_kwok-%s_%s\n' \
    "${K8S_VERSION}" "${ETCD_VERSION}" "${HELM_VERSION}" "${KWOK_VERSION}" "${h}"
}

bin_dir() { printf '%s/bin/%s\n' "$(cache_root)" "$(cache_key)"; }

# The oldest claimed control plane (build-oldest): its own key, over OLDEST_K8S_VERSION, the
# k8s-oldest wrapper module and the recipe.
CSIOP_OLDEST_BINARIES=(kube-apiserver kube-controller-manager kube-scheduler)
oldest_bin_dir() {
  local h
  h=$(
    {
      echo "OLDEST_K8S_VERSION=${OLDEST_K8S_VERSION}"
      cat "${CLUSTER_DIR}/k8s-oldest/go.mod" "${CLUSTER_DIR}/k8s-oldest/go.sum"
      echo "recipe=${CSIOP_BUILD_RECIPE}"
    } | sha256sum | cut -c1-10
  )
  printf '%s/bin/k8s-%s-oldest_%s\n' "$(cache_root)" "${OLDEST_K8S_VERSION}" "${h}"
}

# True if bin dir $1 holds a complete build (stamp written last, all binaries present): those
# named after it, else CSIOP_BINARIES.
bin_dir_complete() {
  local d=$1 b
  shift
  (($#)) || set -- "${CSIOP_BINARIES[@]}"
  [[ -f "${d}/.complete" ]] || return 1
  for b in "$@"; do
    [[ -x "${d}/${b}" ]] || return 1
  done
}

# The release tag's time from the module proxy, as seen from wrapper module dir $1: the fixed
# build date of the Kubernetes binaries (reproducible builds).
k8s_release_date() {
  (cd "$1" && go list -mod=readonly -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)
}

# The -X flags that stamp K8S_VERSION into Kubernetes binaries (what `--version` and the
# version endpoints report), as upstream's release builds do; $1 is the build date.
# test/cluster/build (control plane, kubelet) and build-e2e-test (e2e.test) use the same.
k8s_version_ldflags() {
  local date=$1 minor pkg flags=""
  [[ ${K8S_VERSION} =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || die "bad K8S_VERSION ${K8S_VERSION}"
  minor=${BASH_REMATCH[1]}
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    flags+=" -X ${pkg}.gitVersion=${K8S_VERSION}"
    flags+=" -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
    flags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=${date}"
    if [[ -n ${K8S_GIT_COMMIT:-} ]]; then
      flags+=" -X ${pkg}.gitCommit=${K8S_GIT_COMMIT}"
    fi
  done
  printf '%s\n' "${flags}"
}

state_root() { printf '%s\n' "${CSIOP_STATE_DIR:-${XDG_RUNTIME_DIR:-/tmp}/csi-operator-cluster}"; }

# Parses the common --name option (and, for up, --nodes, --real-node, --k8s, --apiserver-arg,
# --controller-manager-arg and --scheduler-arg) into NAME/NODES/REAL_NODE/K8S and the
# *_EXTRA_ARGS arrays.
NAME=csiop
NODES=2
REAL_NODE=""            # up only: also start a real node (containerd + kubelet + kube-proxy)
K8S=current             # up only: the control plane's version, current (K8S_VERSION) or oldest
APISERVER_EXTRA_ARGS=() # up only: extra kube-apiserver flags (e.g. --runtime-config=...)
KCM_EXTRA_ARGS=()       # up only: extra kube-controller-manager flags (e.g. --kube-api-qps=500)
SCHEDULER_EXTRA_ARGS=() # up only: extra kube-scheduler flags (e.g. --kube-api-qps=500)
# add_extra_arg OPTION FLAG: FLAG for the component of OPTION (--apiserver-arg, ...).
add_extra_arg() {
  case "$1" in
    --apiserver-arg) APISERVER_EXTRA_ARGS+=("$2") ;;
    --controller-manager-arg) KCM_EXTRA_ARGS+=("$2") ;;
    --scheduler-arg) SCHEDULER_EXTRA_ARGS+=("$2") ;;
  esac
}
parse_args() {
  local allow_nodes=$1
  shift
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --name) [[ $# -ge 2 ]] || die "--name needs a value"; NAME=$2; shift 2 ;;
      --name=*) NAME=${1#--name=}; shift ;;
      --nodes)
        [[ ${allow_nodes} == yes ]] || die "unknown option: $1"
        [[ $# -ge 2 ]] || die "--nodes needs a value"; NODES=$2; shift 2 ;;
      --nodes=*)
        [[ ${allow_nodes} == yes ]] || die "unknown option: $1"
        NODES=${1#--nodes=}; shift ;;
      --real-node)
        [[ ${allow_nodes} == yes ]] || die "unknown option: $1"
        # shellcheck disable=SC2034 # used by up
        REAL_NODE=1; shift ;;
      --k8s | --k8s=*)
        [[ ${allow_nodes} == yes ]] || die "unknown option: ${1%%=*}"
        if [[ $1 == --k8s ]]; then
          [[ $# -ge 2 ]] || die "--k8s needs a value"; K8S=$2; shift 2
        else
          K8S=${1#--k8s=}; shift
        fi
        [[ ${K8S} == current || ${K8S} == oldest ]] || die "--k8s must be current or oldest: ${K8S}" ;;
      --apiserver-arg | --controller-manager-arg | --scheduler-arg)
        [[ ${allow_nodes} == yes ]] || die "unknown option: $1"
        [[ $# -ge 2 ]] || die "$1 needs a value"; add_extra_arg "$1" "$2"; shift 2 ;;
      --apiserver-arg=* | --controller-manager-arg=* | --scheduler-arg=*)
        [[ ${allow_nodes} == yes ]] || die "unknown option: ${1%%=*}"
        add_extra_arg "${1%%=*}" "${1#*=}"; shift ;;
      -h|--help) usage; exit 0 ;;
      *) die "unknown argument: $1 (see --help)" ;;
    esac
  done
  [[ ${NAME} =~ ^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$ ]] \
    || die "--name must be a short DNS label ([a-z0-9-], max 32 chars): ${NAME}"
  # 0 kwok nodes only beside a real node (checked by up).
  if ! [[ ${NODES} =~ ^[0-9]+$ ]] || ((NODES > 10000)); then
    die "--nodes must be an integer in 0..10000: ${NODES}"
  fi
  STATE_DIR="$(state_root)/${NAME}"
  # shellcheck disable=SC2034 # used by the scripts that source this file
  KUBECONFIG_PATH="${STATE_DIR}/kubeconfig"
}

# --- running clusters -------------------------------------------------------

# Components in start order (stopped in reverse).
CSIOP_COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
# The real node's components (up --real-node), in start order; lib-node.sh
# starts and stops them.
# shellcheck disable=SC2034 # used by the scripts that source this file
CSIOP_NODE_COMPONENTS=(containerd kube-proxy csiop-test-dns kubelet)

# Never route loopback traffic of the components or our curl/kubectl through a proxy.
export NO_PROXY="127.0.0.1,localhost,::1${NO_PROXY:+,${NO_PROXY}}"
export no_proxy="${NO_PROXY}"

# PID recorded for component $1 of the cluster in $STATE_DIR (empty if none).
recorded_pid() {
  local f="${STATE_DIR}/run/$1.pid"
  if [[ -f ${f} ]]; then cat "${f}" 2>/dev/null || true; fi
}

# True if PID $1 is a live (non-zombie) process started by us for this cluster:
# every component's command line references $STATE_DIR, which guards against
# PID reuse after a reboot or a crash.
pid_is_ours() {
  local pid=$1 state
  [[ ${pid} =~ ^[0-9]+$ ]] || return 1
  [[ -r /proc/${pid}/cmdline ]] || return 1
  state=$(awk '{print $3}' "/proc/${pid}/stat" 2>/dev/null) || return 1
  [[ ${state} != Z && ${state} != X ]] || return 1
  { tr '\0' '\n' <"/proc/${pid}/cmdline"; } 2>/dev/null | grep -qF -- "${STATE_DIR}/"
}

component_running() { pid_is_ours "$(recorded_pid "$1")"; }

# Stops component $1 by its recorded PID: SIGTERM, wait up to 20s, then SIGKILL.
stop_component() {
  local c=$1 pid i
  pid=$(recorded_pid "${c}")
  if pid_is_ours "${pid}"; then
    log "stopping ${c} (pid ${pid})"
    kill -TERM "${pid}" 2>/dev/null || true
    for ((i = 0; i < 200; i++)); do
      pid_is_ours "${pid}" || break
      sleep 0.1
    done
    if pid_is_ours "${pid}"; then
      log "${c} (pid ${pid}) did not exit after SIGTERM; sending SIGKILL"
      kill -KILL "${pid}" 2>/dev/null || true
      for ((i = 0; i < 100; i++)); do
        pid_is_ours "${pid}" || break
        sleep 0.1
      done
      pid_is_ours "${pid}" && die "${c} (pid ${pid}) is still running"
    fi
  fi
  rm -f "${STATE_DIR}/run/${c}.pid"
}

# Starts component $1 (binary path $2, args...) detached in its own session,
# logging to logs/$1.log; the PID file holds the PID of the binary itself.
start_component() {
  local name=$1
  shift
  log "starting ${name}"
  # The command line, NUL-separated, so `component start` can start it again.
  printf '%s\0' "$@" >"${STATE_DIR}/run/${name}.argv"
  # shellcheck disable=SC2016 # $$ and "$@" are expanded by the inner shell
  setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "${STATE_DIR}/run/${name}.pid" "$@" \
    </dev/null >>"${STATE_DIR}/logs/${name}.log" 2>&1 6>&- 7>&- 8>&- 9>&- &
  local i
  for ((i = 0; i < 50; i++)); do
    [[ -s "${STATE_DIR}/run/${name}.pid" ]] && return 0
    sleep 0.1
  done
  die "${name} did not start"
}

fail_component() {
  local name=$1
  shift
  log "ERROR: $* -- last lines of ${STATE_DIR}/logs/${name}.log:"
  tail -n 30 "${STATE_DIR}/logs/${name}.log" >&2 || true
  exit 1
}

# wait_for NAME TIMEOUT_SECONDS COMMAND...: polls COMMAND until it succeeds,
# failing early if component NAME died.
wait_for() {
  local name=$1 timeout=$2 deadline
  shift 2
  deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    component_running "${name}" || fail_component "${name}" "${name} exited"
    ((SECONDS < deadline)) || fail_component "${name}" "${name} not healthy after ${timeout}s"
    sleep 0.5
  done
}

https_healthy() { # PORT PATH
  [[ $(curl -ksS --max-time 3 "https://127.0.0.1:$1$2") == ok ]]
}

http_healthy() { # PORT PATH
  [[ $(curl -sS --max-time 3 "http://127.0.0.1:$1$2") == ok ]]
}

# Value of KEY in the cluster's cluster.env (empty if unset).
cluster_env() { sed -n "s/^$1=//p" "${STATE_DIR}/cluster.env" 2>/dev/null; }

# Waits until component $1 answers its health check (kwok: has stayed up for
# 2 s), with the ports recorded in cluster.env.
wait_component_healthy() {
  local c=$1 port=""
  [[ ${c} == containerd ]] || port=$(cluster_env "$(component_port_var "${c}")")
  case "${c}" in
    etcd) wait_for etcd 30 bash -c "curl -sS --max-time 3 http://127.0.0.1:${port}/health | grep -q '\"health\":\"true\"'" ;;
    kube-apiserver) wait_for "${c}" 120 https_healthy "${port}" "$(apiserver_readyz)" ;;
    kube-controller-manager | kube-scheduler) wait_for "${c}" 60 https_healthy "${port}" /healthz ;;
    containerd) wait_for "${c}" 30 ctr --address "$(cluster_env CONTAINERD_SOCK)" version ;;
    kubelet) wait_for "${c}" 60 http_healthy "${port}" /healthz ;;
    kube-proxy)
      # /livez: serving and synced (/healthz also wants the Node object); then
      # its rules are in place once the KUBE-SERVICES jump exists.
      wait_for "${c}" 60 curl -fsS --max-time 3 "http://127.0.0.1:${port}/livez"
      wait_for "${c}" 60 bash -c "iptables-save -t nat | grep -q -- '^-A PREROUTING .*-j KUBE-SERVICES'"
      ;;
    csiop-test-dns)
      wait_for "${c}" 60 "$(cluster_env NODE_TOOLS_DIR)/csiop-test-dns" \
        --query kubernetes.default.svc.cluster.local --server "127.0.0.1:${port}"
      ;;
    *)
      sleep 2
      component_running "${c}" || fail_component "${c}" "${c} exited"
      ;;
  esac
}

# The API server's readiness path. A cluster started with extra API server
# flags (e.g. --runtime-config disabling a built-in resource) excludes
# informer-sync: the server's own informer for a disabled resource never syncs,
# while every other check still gates.
apiserver_readyz() {
  if grep -q '^APISERVER_EXTRA_ARGS=1$' "${STATE_DIR}/cluster.env" 2>/dev/null; then
    echo '/readyz?exclude=informer-sync'
  else
    echo /readyz
  fi
}

component_port_var() {
  case "$1" in
    etcd) echo ETCD_CLIENT_PORT ;;
    kube-apiserver) echo APISERVER_PORT ;;
    kube-controller-manager) echo KCM_PORT ;;
    kube-scheduler) echo SCHEDULER_PORT ;;
    kwok) echo KWOK_PORT ;;
    kubelet) echo KUBELET_HEALTHZ_PORT ;;
    kube-proxy) echo KUBE_PROXY_HEALTHZ_PORT ;;
    csiop-test-dns) echo DNS_PORT ;;
    *) die "unknown component: $1" ;;
  esac
}

stop_all_components() {
  local i
  for ((i = ${#CSIOP_COMPONENTS[@]} - 1; i >= 0; i--)); do
    stop_component "${CSIOP_COMPONENTS[i]}"
  done
}

# Takes an exclusive lock on the cluster name (fd 8) so up/down of the same
# cluster never interleave.
lock_cluster() {
  mkdir -p "$(state_root)"
  exec 8>"$(state_root)/.${NAME}.lock"
  if ! flock -n 8; then
    log "waiting for another up/down of cluster ${NAME}"
    flock 8
  fi
}

# The real node (up --real-node): start, stop, machine-wide cleanup.
# shellcheck source=lib-node.sh
source "${CLUSTER_DIR}/lib-node.sh"
