# shellcheck shell=bash
# The real node of `test/cluster/up --real-node`: Debian's containerd, the
# kubelet and kube-proxy of K8S_VERSION, and csiop-test-dns (a cluster-DNS test
# stand-in), registered as node "127.0.0.1" of the local control plane.
# Sourced by lib.sh; node_start needs up's helpers (issue_cert, write_kubeconfig).
#
# A real node is machine-wide: it owns /var/lib/kubelet, the bridge csiop0,
# pod CIDR 10.244.0.0/24, a few iptables rules and sysctls. One at a time per
# machine: the cluster owning it is recorded in /run/csi-operator-real-node/owner
# (under the flock /run/lock/csi-operator-real-node.lock), and another cluster's
# `up --real-node` is refused while that owner's state directory exists.
# node_stop stops everything by PID and removes everything the node created.

CSIOP_NODE_NAME=127.0.0.1
CSIOP_NODE_BRIDGE=csiop0
CSIOP_NODE_POD_CIDR=10.244.0.0/24
CSIOP_NODE_GATEWAY=10.244.0.1
CSIOP_CLUSTER_CIDR=10.244.0.0/16
CSIOP_KUBERNETES_SVC_IP=10.96.0.1
CSIOP_DNS_SVC_IP=10.96.0.10
CSIOP_CNI_NETWORK=csiop-real-node
CSIOP_NAT_CHAIN=CSIOP-REAL-NODE
KUBELET_ROOT=/var/lib/kubelet
KUBELET_ROOT_MARKER="${KUBELET_ROOT}/.csi-operator-real-node"
NODE_MACHINE_DIR=/run/csi-operator-real-node
NODE_MACHINE_LOCK=/run/lock/csi-operator-real-node.lock
# Sysctls the node may change (the kubelet's kernel tunables, forwarding for
# the bridge): saved when a cluster claims the machine, restored on release.
NODE_SYSCTLS=(net/ipv4/ip_forward net/ipv4/conf/all/route_localnet net/ipv6/conf/all/forwarding
  net/bridge/bridge-nf-call-iptables net/bridge/bridge-nf-call-ip6tables
  vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
  kernel/keys/root_maxkeys kernel/keys/root_maxbytes)
# kube-proxy's netfilter accounting objects (nfacct), which it never deletes;
# removed on release unless they existed at claim time.
NODE_NFACCT=(ct_state_invalid_dropped_pkts localhost_nps_accepted_pkts)
# Host directories the node's programs create; those absent at claim time are
# removed on release.
NODE_HOST_DIRS=("${KUBELET_ROOT}" /var/lib/cni /var/log/pods /var/log/containers /run/containerd /run/netns)

node_dir() { printf '%s/node\n' "${STATE_DIR}"; }
# nodetools binaries (csiop-test-dns, cri-cleanup, nfacct-cleanup): set by up, else recorded.
node_tools_dir() { printf '%s\n' "${NODE_TOOLS_DIR:-$(cluster_env NODE_TOOLS_DIR)}"; }

# --- machine ownership ------------------------------------------------------------------

# Takes the machine-wide node lock on fd 6 (held until the script exits or
# node_unlock_machine); start_component never passes fd 6 on.
NODE_MACHINE_LOCKED=""
node_lock_machine() {
  [[ -z ${NODE_MACHINE_LOCKED} ]] || return 0
  mkdir -p "$(dirname "${NODE_MACHINE_LOCK}")"
  exec 6>"${NODE_MACHINE_LOCK}"
  if ! flock -n 6; then
    log "waiting for the machine-wide real-node lock ${NODE_MACHINE_LOCK}"
    flock -w 300 6 || die "could not take ${NODE_MACHINE_LOCK} within 300s"
  fi
  NODE_MACHINE_LOCKED=1
}
node_unlock_machine() {
  exec 6>&-
  NODE_MACHINE_LOCKED=""
}

node_owner() { cat "${NODE_MACHINE_DIR}/owner" 2>/dev/null || true; }

# True if any process recorded by the cluster in state directory $1 still runs (a cluster
# whose processes were all killed, say by the end of a session, owns nothing any more).
owner_alive() {
  local f pid
  for f in "$1"/run/*.pid; do
    [[ -f ${f} ]] || continue
    pid=$(cat "${f}" 2>/dev/null) || continue
    [[ ${pid} =~ ^[0-9]+$ && -r /proc/${pid}/cmdline ]] || continue
    { tr '\0' '\n' <"/proc/${pid}/cmdline"; } 2>/dev/null | grep -qF -- "$1/" && return 0
  done
  return 1
}

# The owner's state directory when that cluster still runs, else nothing; a dead owner's
# node is swept and its state directory removed.
live_owner() {
  local owner
  owner=$(node_owner)
  if [[ -n ${owner} && ${owner} != "${STATE_DIR}" && -d ${owner} ]] && ! owner_alive "${owner}"; then
    log "cluster '$(basename "${owner}")' owned the real node but none of its processes runs; cleaning up after it and removing ${owner}"
    node_sweep_machine "${owner}" >&2
    case "${owner}" in /*/*) rm -rf --one-file-system "${owner}" 2>/dev/null || true ;; esac
  fi
  printf '%s\n' "${owner}"
}

# Makes this cluster the machine's real-node owner, or dies if another live
# cluster owns it. Cleans up after a previous node that was never torn down.
node_claim() {
  local owner d s
  node_lock_machine
  owner=$(live_owner)
  if [[ -n ${owner} && ${owner} != "${STATE_DIR}" ]]; then
    if [[ -d ${owner} ]]; then
      die "a real node is already running on this machine, for cluster '$(basename "${owner}")' (${owner}); stop it first: CSIOP_STATE_DIR=$(dirname "${owner}") test/cluster/down --name $(basename "${owner}")"
    fi
    log "the real node of ${owner} was never torn down (its state directory is gone); cleaning up after it"
    node_sweep_machine "${owner}"
  fi
  [[ -n ${owner} ]] || check_kubelet_root
  mkdir -p "${NODE_MACHINE_DIR}"
  # Kept from a crashed owner: the values before the first claim.
  if [[ ! -f "${NODE_MACHINE_DIR}/sysctl.saved" ]]; then
    for s in "${NODE_SYSCTLS[@]}"; do
      if [[ -r /proc/sys/${s} ]]; then printf '%s=%s\n' "${s}" "$(cat "/proc/sys/${s}")"; fi
    done >"${NODE_MACHINE_DIR}/sysctl.saved.tmp"
    for d in "${NODE_HOST_DIRS[@]}"; do
      [[ -e ${d} ]] || printf '%s\n' "${d}"
    done >"${NODE_MACHINE_DIR}/created-dirs"
    "$(node_tools_dir)/nfacct-cleanup" --list >"${NODE_MACHINE_DIR}/nfacct-before" 2>/dev/null || true
    mv "${NODE_MACHINE_DIR}/sysctl.saved.tmp" "${NODE_MACHINE_DIR}/sysctl.saved"
  fi
  printf '%s\n' "${STATE_DIR}" >"${NODE_MACHINE_DIR}/owner"
  # Leftovers of a node that ran before /run was cleared (reboot): harmless if none.
  [[ -n ${owner} ]] || node_sweep_machine ""
}

# Dies if /var/lib/kubelet holds something that is not ours (another kubelet).
check_kubelet_root() {
  if [[ -d ${KUBELET_ROOT} && ! -f ${KUBELET_ROOT_MARKER} ]] \
    && [[ -n $(ls -A "${KUBELET_ROOT}" 2>/dev/null) ]]; then
    die "${KUBELET_ROOT} exists and was not made by test/cluster (no ${KUBELET_ROOT_MARKER}); is another kubelet installed here? Refusing to use it"
  fi
}

# Early checks for up (before the control plane starts): dies if another live
# cluster owns the machine's real node, or /var/lib/kubelet is not ours.
node_precheck() {
  local owner
  owner=$(live_owner)
  if [[ -n ${owner} && ${owner} != "${STATE_DIR}" && -d ${owner} ]]; then
    die "a real node is already running on this machine, for cluster '$(basename "${owner}")' (${owner}); stop it first: CSIOP_STATE_DIR=$(dirname "${owner}") test/cluster/down --name $(basename "${owner}")"
  fi
  [[ -n ${owner} ]] || check_kubelet_root
}

# Gives the machine back: restores the sysctls, removes the host directories
# the node created, forgets the owner. Only for the owner.
node_release() {
  local line d names=() n
  [[ $(node_owner) == "${STATE_DIR}" ]] || return 0
  if [[ -f "${NODE_MACHINE_DIR}/sysctl.saved" ]]; then
    while IFS= read -r line; do
      [[ ${line} == */*=* ]] || continue
      printf '%s\n' "${line#*=}" >"/proc/sys/${line%%=*}" 2>/dev/null \
        || log "WARNING: could not restore ${line%%=*} to ${line#*=}"
    done <"${NODE_MACHINE_DIR}/sysctl.saved"
  fi
  if [[ -f "${NODE_MACHINE_DIR}/created-dirs" ]]; then
    while IFS= read -r d; do
      [[ -n ${d} && -e ${d} ]] || continue
      if [[ -n $(mounts_under "${d}") ]]; then
        log "WARNING: not removing ${d}: something is still mounted under it"
        continue
      fi
      rm -rf --one-file-system "${d}" || log "WARNING: could not remove ${d}"
    done <"${NODE_MACHINE_DIR}/created-dirs"
  fi
  # After sweep_iptables: objects still referenced by a rule cannot be deleted.
  for n in "${NODE_NFACCT[@]}"; do
    grep -qx "${n}" "${NODE_MACHINE_DIR}/nfacct-before" 2>/dev/null || names+=("${n}")
  done
  if ((${#names[@]} > 0)) && [[ -x "$(node_tools_dir)/nfacct-cleanup" ]]; then
    "$(node_tools_dir)/nfacct-cleanup" "${names[@]}" 2>/dev/null || log "WARNING: could not delete nfacct objects ${names[*]}"
  fi
  rm -rf "${NODE_MACHINE_DIR}"
  # The 0-byte lock file is kept, like the per-cluster ones (see down).
}

# --- cleanup helpers ----------------------------------------------------------------------

# Mount points at or under directory $1, deepest first.
mounts_under() {
  local dir=${1%/}
  awk -v d="${dir}" '$5 == d || index($5, d "/") == 1 { print length($5), $5 }' /proc/self/mountinfo \
    | sort -rn | cut -d' ' -f2- | sed 's/\\040/ /g'
}

# Unmounts everything at or under each directory given, deepest first; lazily
# when a plain unmount fails. Returns non-zero if something stays mounted.
unmount_under() {
  local dir m left
  for _ in 1 2 3 4 5; do
    left=0
    for dir in "$@"; do
      while IFS= read -r m; do
        [[ -n ${m} ]] || continue
        left=1
        umount "${m}" 2>/dev/null || umount -l "${m}" 2>/dev/null || true
      done < <(mounts_under "${dir}")
    done
    ((left)) || return 0
  done
  for dir in "$@"; do
    [[ -z $(mounts_under "${dir}") ]] || { log "WARNING: still mounted under ${dir}: $(mounts_under "${dir}" | tr '\n' ' ')"; return 1; }
  done
}

# State letter of process $1 (R, S, Z...; empty if gone). comm may hold
# spaces and parentheses: the fields that matter follow the last ')'.
proc_state() {
  local line
  { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 0
  line=${line##*) }
  printf '%s\n' "${line%% *}"
}

# PID $1 and all its descendants, parents before children.
process_tree() {
  local -A kids=()
  local s line pid ppid queue=("$1")
  for s in /proc/[0-9]*/stat; do
    { read -r line <"${s}"; } 2>/dev/null || continue
    read -r _ ppid _ <<<"${line##*) }"
    pid=${s#/proc/}
    kids[${ppid}]+=" ${pid%/stat}"
  done
  while ((${#queue[@]} > 0)); do
    pid=${queue[0]}
    queue=("${queue[@]:1}")
    printf '%s\n' "${pid}"
    # shellcheck disable=SC2206 # word splitting of the PID list is intended
    [[ -z ${kids[${pid}]:-} ]] || queue+=(${kids[${pid}]})
  done
}

# Live processes whose command line mentions "$1/" (a cluster's node directory).
pids_mentioning() {
  local p
  for p in /proc/[0-9]*; do
    [[ -r ${p}/cmdline ]] || continue
    { tr '\0' '\n' <"${p}/cmdline"; } 2>/dev/null | grep -qF -- "$1/" && printf '%s\n' "${p#/proc/}"
  done
}

# SIGKILLs the containerd shims of node directory $1 together with every
# process under them (the containers), children first.
kill_shims() {
  local nd=$1 pid comm tree=() all=()
  while read -r pid; do
    comm=$(cat "/proc/${pid}/comm" 2>/dev/null) || continue
    [[ ${comm} == containerd-shim* ]] || continue
    mapfile -t tree < <(process_tree "${pid}")
    all+=("${tree[@]}")
  done < <(pids_mentioning "${nd}")
  ((${#all[@]} > 0)) || return 0
  log "killing ${#all[@]} leftover shim/container process(es)"
  local i alive
  for ((i = ${#all[@]} - 1; i >= 0; i--)); do
    kill -KILL "${all[i]}" 2>/dev/null || true
  done
  for ((i = 0; i < 50; i++)); do
    alive=0
    for pid in "${all[@]}"; do
      case $(proc_state "${pid}") in "" | Z | X) ;; *) alive=1; break ;; esac
    done
    ((alive)) || return 0
    sleep 0.1
  done
  log "WARNING: some shim/container processes survived SIGKILL"
}

# Removes iptables state of the node, in both families: our DNAT chain, every
# KUBE-* chain (kube-proxy's and the kubelet's), the CNI bridge plugin's
# per-pod masquerade chains of our network and portmap's chains once unused.
sweep_iptables() {
  local bin table dump chains jumps c re list=()
  for bin in iptables ip6tables; do
    command -v "${bin}-save" >/dev/null || continue
    for table in nat filter mangle; do
      dump=$("${bin}-save" -t "${table}" 2>/dev/null) || continue
      chains=$(
        {
          grep -oE "^:(${CSIOP_NAT_CHAIN}|KUBE-[A-Z0-9-]+) " <<<"${dump}" | tr -d ': '
          # CNI-<hash> chains that rules of our network (comment name: "csiop-real-node") jump to
          grep -F "name: \\\"${CSIOP_CNI_NETWORK}\\\"" <<<"${dump}" | grep -oE -- '-j CNI-[A-Za-z0-9-]+' | cut -c4-
          # portmap's shared chains, when no per-pod chain is left in them
          if ! grep -qE '^-A CNI-HOSTPORT-DNAT .*-j CNI-DN-' <<<"${dump}"; then
            grep -oE '^:CNI-HOSTPORT-[A-Z]+ ' <<<"${dump}" | tr -d ': '
          fi
        } | sort -u || true
      )
      [[ -n ${chains} ]] || continue
      mapfile -t list <<<"${chains}"
      re=$(paste -sd'|' <<<"${chains}")
      # Rules of other chains (PREROUTING, POSTROUTING, ...) that jump to ours.
      jumps=$(grep -E '^-A ' <<<"${dump}" | grep -E -- "-j (${re})( |\$)" | grep -vE "^-A (${re}) " || true)
      {
        echo "*${table}"
        # shellcheck disable=SC2001 # one substitution per line of a multi-line string
        [[ -z ${jumps} ]] || sed 's/^-A /-D /' <<<"${jumps}"
        for c in "${list[@]}"; do echo "-F ${c}"; done
        for c in "${list[@]}"; do echo "-X ${c}"; done
        echo COMMIT
      } | "${bin}-restore" -w --noflush 2>/dev/null \
        || log "WARNING: could not remove ${bin} ${table} chains: ${list[*]}"
    done
  done
}

# Machine-wide cleanup of what a real node leaves on the host, for the node
# whose state directory is $1 (empty: only the host-wide parts). Runs after
# the node's processes are stopped; idempotent; never fails (a subshell
# without errexit: every step is attempted).
node_sweep_machine() {
  (
    set +e +o pipefail
    sweep_machine "$@"
  )
  return 0
}
sweep_machine() {
  local sd=${1:-} ns d l pid kp killed="" dirs=()
  if [[ -n ${sd} ]]; then
    # Programs of a node whose state directory was deleted under them.
    for pid in $(pids_mentioning "${sd}/node"); do
      [[ $(cat "/proc/${pid}/comm" 2>/dev/null) == containerd-shim* ]] && continue
      log "stopping leftover process ${pid} ($(cat "/proc/${pid}/comm" 2>/dev/null))"
      kill -TERM "${pid}" 2>/dev/null && killed=1
    done
    [[ -z ${killed} ]] || sleep 2
    kill_shims "${sd}/node"
  fi
  # kube-proxy's own cleanup (iptables, both families) if a binary is at hand.
  kp="${BIN_DIR:-}/kube-proxy"
  [[ -x ${kp} ]] || kp="$(bin_dir)/kube-proxy"
  if [[ -x ${kp} ]]; then
    "${kp}" --cleanup --v=0 >/dev/null 2>&1 || true
  fi
  sweep_iptables
  # Network namespaces CNI made for pods of our network.
  for ns in /run/netns/cni-*; do
    [[ -e ${ns} ]] || continue
    if ip -n "${ns##*/}" -4 -o addr show 2>/dev/null | grep -q " inet ${CSIOP_NODE_POD_CIDR%.*}\."; then
      ip netns delete "${ns##*/}" 2>/dev/null || { umount -l "${ns}" 2>/dev/null; rm -f "${ns}"; }
    fi
  done
  ip link show "${CSIOP_NODE_BRIDGE}" >/dev/null 2>&1 && ip link delete "${CSIOP_NODE_BRIDGE}"
  # Mounts: the pods' volumes under the kubelet dir, containers' rootfs and shm.
  [[ -z ${sd} ]] || dirs+=("${sd}/node")
  unmount_under "${KUBELET_ROOT}" ${dirs[@]+"${dirs[@]}"} || true
  # Pod cgroups (cgroupfs driver, cgroup v1 hierarchies or v2).
  for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods /sys/fs/cgroup/kubepods.slice; do
    [[ -d ${d} ]] && find "${d}" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  if [[ -d ${KUBELET_ROOT} && -z $(mounts_under "${KUBELET_ROOT}") ]]; then
    if [[ -f ${KUBELET_ROOT_MARKER} || -z $(ls -A "${KUBELET_ROOT}") ]]; then
      rm -rf --one-file-system "${KUBELET_ROOT}" || log "WARNING: could not remove ${KUBELET_ROOT}"
    fi
  fi
  # CNI result cache entries of our network; the kubelet's container log links.
  rm -f /var/lib/cni/results/"${CSIOP_CNI_NETWORK}"-* 2>/dev/null
  for l in /var/log/containers/*.log; do
    [[ -L ${l} ]] || continue
    [[ -e ${l} && $(readlink "${l}") != */node/pod-logs/* ]] || rm -f "${l}"
  done
  return 0
}

# --- start ----------------------------------------------------------------------------------

# Starts the real node of the cluster in STATE_DIR (control plane up, ports in
# cluster.env, IMAGES_DIR set). Dies on failure; up's exit trap calls node_stop.
node_start() {
  local nd sock t start=${SECONDS}
  local kubelet_port kubelet_healthz_port kube_proxy_healthz_port kube_proxy_metrics_port dns_port
  nd=$(node_dir)
  kubelet_port=$(cluster_env KUBELET_PORT)
  kubelet_healthz_port=$(cluster_env KUBELET_HEALTHZ_PORT)
  kube_proxy_healthz_port=$(cluster_env KUBE_PROXY_HEALTHZ_PORT)
  kube_proxy_metrics_port=$(cluster_env KUBE_PROXY_METRICS_PORT)
  dns_port=$(cluster_env DNS_PORT)
  [[ $(id -u) -eq 0 ]] || die "--real-node needs root (containerd, mounts, iptables)"
  for t in containerd ctr runc containerd-shim-runc-v2 iptables iptables-save iptables-restore ip findmnt; do
    command -v "${t}" >/dev/null || die "${t} is not installed (scripts/install-deps)"
  done
  for t in bridge host-local portmap loopback; do
    [[ -x /usr/lib/cni/${t} ]] || die "/usr/lib/cni/${t} is missing (apt-get install containernetworking-plugins)"
  done
  sock="${nd}/containerd.sock"
  ((${#sock} < 100)) || die "containerd socket path too long for a unix socket: ${sock} (use a shorter CSIOP_STATE_DIR)"

  mkdir -p "${nd}"
  touch "${nd}/.started" # down: this cluster started (part of) a node
  node_claim

  # --- containerd
  mkdir -p "${nd}/containerd/root" "${nd}/containerd/state" "${nd}/cni/net.d" "${nd}/cni/ipam" "${nd}/pod-logs"
  cat >"${nd}/containerd.toml" <<EOF
# containerd of the real test node of cluster ${NAME} (test/cluster/up --real-node)
version = 2
root = "${nd}/containerd/root"
state = "${nd}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "${sock}"

[ttrpc]
  address = "${sock}.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins]
  [plugins."io.containerd.internal.v1.opt"]
    path = "${nd}/containerd/opt"
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "localhost/csiop-test/pause:1"
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_selinux = false
    # The container may lack CAP_SYS_RESOURCE (cannot lower oom_score_adj).
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = "${nd}/containerd/runc"
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "${nd}/cni/net.d"
      max_conf_num = 1
EOF
  cat >"${nd}/cni/net.d/10-${CSIOP_CNI_NETWORK}.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "${CSIOP_CNI_NETWORK}",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "${CSIOP_NODE_BRIDGE}",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "${nd}/cni/ipam",
        "ranges": [[{"subnet": "${CSIOP_NODE_POD_CIDR}", "gateway": "${CSIOP_NODE_GATEWAY}"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
  start_component containerd containerd --config "${nd}/containerd.toml" --log-level warn
  wait_component_healthy containerd
  log "importing the test images from ${IMAGES_DIR}"
  for t in "${IMAGES_DIR}"/*.tar; do
    ctr -n k8s.io --address "${sock}" images import "${t}" >/dev/null || die "ctr images import ${t} failed"
  done
  if [[ -n ${CSIOP_IMAGE_ARCHIVES:-} ]]; then
    import_image_archives "${sock}" "${CSIOP_IMAGE_ARCHIVES}"
  fi

  # --- host network: the bridge first, so route_localnet is set before any pod starts
  ip link show "${CSIOP_NODE_BRIDGE}" >/dev/null 2>&1 || ip link add "${CSIOP_NODE_BRIDGE}" type bridge
  ip addr replace "${CSIOP_NODE_GATEWAY}/${CSIOP_NODE_POD_CIDR#*/}" dev "${CSIOP_NODE_BRIDGE}"
  ip link set "${CSIOP_NODE_BRIDGE}" up
  echo 1 >"/proc/sys/net/ipv4/conf/${CSIOP_NODE_BRIDGE}/route_localnet"
  echo 1 >/proc/sys/net/ipv4/ip_forward

  # --- kubelet root: shared, so Bidirectional mounts (CSI node plugins) propagate
  mkdir -p "${KUBELET_ROOT}"
  touch "${KUBELET_ROOT_MARKER}"
  if [[ $(findmnt -n -o TARGET --mountpoint "${KUBELET_ROOT}" 2>/dev/null) != "${KUBELET_ROOT}" ]]; then
    mount --bind "${KUBELET_ROOT}" "${KUBELET_ROOT}"
  fi
  mount --make-rshared "${KUBELET_ROOT}"

  # --- credentials
  issue_cert kubelet-client "/O=system:nodes/CN=system:node:${CSIOP_NODE_NAME}"
  issue_cert kubelet-serving "/CN=${CSIOP_NODE_NAME}" "IP:${CSIOP_NODE_NAME},DNS:localhost"
  issue_cert kube-proxy "/CN=system:kube-proxy"
  issue_cert csiop-test-dns "/CN=csiop-test-dns"
  chmod 600 "${PKI}"/*.key
  write_kubeconfig "${nd}/kubelet.kubeconfig" "system:node:${CSIOP_NODE_NAME}" \
    "${PKI}/kubelet-client.crt" "${PKI}/kubelet-client.key"
  write_kubeconfig "${nd}/kube-proxy.kubeconfig" system:kube-proxy "${PKI}/kube-proxy.crt" "${PKI}/kube-proxy.key"
  write_kubeconfig "${nd}/csiop-test-dns.kubeconfig" csiop-test-dns \
    "${PKI}/csiop-test-dns.crt" "${PKI}/csiop-test-dns.key"
  # The DNS stand-in reads Services with the built-in kube-dns role; the
  # kube-dns Service reserves the cluster DNS address, as in real clusters.
  "${KUBECTL[@]}" apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: csiop-test-dns
  labels: {app.kubernetes.io/part-of: csiop-test-cluster}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:kube-dns"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: csiop-test-dns}
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns, app.kubernetes.io/part-of: csiop-test-cluster}
  annotations:
    csiop.dev/note: "served by csiop-test-dns, a test stand-in on the host (no endpoints; pods reach it through a DNAT rule)"
spec:
  clusterIP: ${CSIOP_DNS_SVC_IP}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
EOF

  # --- DNS stand-in
  start_component csiop-test-dns "${NODE_TOOLS_DIR}/csiop-test-dns" \
    --listen "127.0.0.1:${dns_port}" --kubeconfig "${nd}/csiop-test-dns.kubeconfig" --domain cluster.local
  wait_component_healthy csiop-test-dns

  # --- kubelet
  cat >"${nd}/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: ${kubelet_port}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: ${kubelet_healthz_port}
tlsCertFile: ${PKI}/kubelet-serving.crt
tlsPrivateKeyFile: ${PKI}/kubelet-serving.key
rotateCertificates: false
serverTLSBootstrap: false
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${PKI}/ca.crt}
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://${sock}
cgroupDriver: cgroupfs
# cgroup v1 hosts: deprecated, still supported when asked.
failCgroupV1: false
failSwapOn: false
enforceNodeAllocatable: []
clusterDNS: [${CSIOP_DNS_SVC_IP}]
clusterDomain: cluster.local
podLogsDir: ${nd}/pod-logs
# A shared test machine: never garbage-collect images (they cannot be pulled
# again) and evict only when the disk or memory is really exhausted.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 50Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
  imagefs.inodesFree: 1%
maxPods: 110
# Every pod is synced again at this period (1m by default). A mounted volume's online expansion
# (NodeExpandVolume) waits for its pod's next sync, so the expansion e2e waited a minute for it.
syncFrequency: 10s
EOF
  start_component kubelet "${BIN_DIR}/kubelet" \
    --config="${nd}/kubelet.yaml" \
    --kubeconfig="${nd}/kubelet.kubeconfig" \
    --root-dir="${KUBELET_ROOT}" \
    --hostname-override="${CSIOP_NODE_NAME}" \
    --node-labels=csiop.dev/real-node=true \
    --v=1
  wait_component_healthy kubelet
  # kube-proxy after the kubelet: it waits (30 s) for its Node object to exist.
  wait_for kubelet 60 "${KUBECTL[@]}" get node "${CSIOP_NODE_NAME}"

  # --- kube-proxy
  cat >"${nd}/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: ${nd}/kube-proxy.kubeconfig
mode: iptables
hostnameOverride: "${CSIOP_NODE_NAME}"
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:${kube_proxy_healthz_port}
metricsBindAddress: 127.0.0.1:${kube_proxy_metrics_port}
clusterCIDR: ${CSIOP_CLUSTER_CIDR}
# NodePorts only on the bridge address, never on the machine's own interfaces.
nodePortAddresses: ["${CSIOP_NODE_GATEWAY}/32"]
iptables:
  # pod -> ClusterIP -> pod on the same bridge: SNAT so replies come back through the host.
  masqueradeAll: true
  # Leaves net.ipv4.conf.all.route_localnet alone.
  localhostNodePorts: false
  syncPeriod: 30s
  minSyncPeriod: 0s
# Leave the machine's conntrack limits and timeouts as they are.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
  udpTimeout: 0s
  udpStreamTimeout: 0s
EOF
  start_component kube-proxy "${BIN_DIR}/kube-proxy" --config="${nd}/kube-proxy.yaml" --v=1
  wait_component_healthy kube-proxy
  node_ensure_dnat

  wait_for kubelet 120 node_ready
  log "real node ${CSIOP_NODE_NAME} Ready in $((SECONDS - start))s (kubelet $("${BIN_DIR}/kubelet" --version | cut -d' ' -f2), $(containerd --version | cut -d' ' -f2-3))"
}

node_ready() {
  [[ $("${KUBECTL[@]}" get node "${CSIOP_NODE_NAME}" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}

# Our DNAT rules, first in nat PREROUTING (pods, from the bridge) and OUTPUT
# (host and hostNetwork pods), ahead of kube-proxy's KUBE-SERVICES jump:
#   the kubernetes Service 10.96.0.1:443 -> the API server on 127.0.0.1
#   the cluster DNS 10.96.0.10:53 (udp, tcp) -> csiop-test-dns on 127.0.0.1
# Packets from the bridge may be routed to 127.0.0.1 thanks to route_localnet.
node_ensure_dnat() {
  local apiserver_port dns_port proto
  apiserver_port=$(cluster_env APISERVER_PORT)
  dns_port=$(cluster_env DNS_PORT)
  iptables -w -t nat -N "${CSIOP_NAT_CHAIN}" 2>/dev/null || iptables -w -t nat -F "${CSIOP_NAT_CHAIN}"
  iptables -w -t nat -A "${CSIOP_NAT_CHAIN}" -d "${CSIOP_KUBERNETES_SVC_IP}/32" -p tcp --dport 443 \
    -m comment --comment "csiop real node: kubernetes Service -> apiserver" \
    -j DNAT --to-destination "127.0.0.1:${apiserver_port}"
  for proto in udp tcp; do
    iptables -w -t nat -A "${CSIOP_NAT_CHAIN}" -d "${CSIOP_DNS_SVC_IP}/32" -p "${proto}" --dport 53 \
      -m comment --comment "csiop real node: cluster DNS -> csiop-test-dns" \
      -j DNAT --to-destination "127.0.0.1:${dns_port}"
  done
  while iptables -w -t nat -D PREROUTING -i "${CSIOP_NODE_BRIDGE}" -j "${CSIOP_NAT_CHAIN}" 2>/dev/null; do :; done
  while iptables -w -t nat -D OUTPUT -j "${CSIOP_NAT_CHAIN}" 2>/dev/null; do :; done
  iptables -w -t nat -I PREROUTING 1 -i "${CSIOP_NODE_BRIDGE}" -j "${CSIOP_NAT_CHAIN}"
  iptables -w -t nat -I OUTPUT 1 -j "${CSIOP_NAT_CHAIN}"
}

# --- stop -------------------------------------------------------------------------------------

# True if the cluster in STATE_DIR started (part of) a real node or owns the machine's.
node_present() {
  [[ -f "$(node_dir)/.started" || $(node_owner) == "${STATE_DIR}" ]]
}

# Stops the real node of the cluster in STATE_DIR and removes everything it
# left on the machine. Safe after a half-done node_start; never dies.
node_stop() {
  local nd sock tools
  node_present || return 0
  nd=$(node_dir)
  sock="${nd}/containerd.sock"
  node_lock_machine
  stop_component kubelet || true
  if component_running containerd; then
    tools=$(node_tools_dir)
    if [[ -x ${tools}/cri-cleanup ]]; then
      log "stopping and removing the node's pods (CRI)"
      "${tools}/cri-cleanup" --endpoint "unix://${sock}" --timeout 60s 2>&1 | sed 's/^/    /' >&2 || true
    fi
  fi
  stop_component csiop-test-dns || true
  stop_component kube-proxy || true
  stop_component containerd || true
  kill_shims "${nd}"
  if [[ $(node_owner) == "${STATE_DIR}" ]]; then
    node_sweep_machine "${STATE_DIR}"
    node_release
  else
    # The machine belongs to another cluster: only what is ours.
    unmount_under "${nd}" || true
  fi
  rm -f "${nd}/.started"
  node_unlock_machine
}

# The image references in a docker-style tarball (its manifest.json's RepoTags), one a line.
archive_tags() { # FILE.tar
  tar -xOf "$1" manifest.json 2>/dev/null | jq -r '.[].RepoTags[]?' 2>/dev/null
}

# The first *.tar of DIR holding an image whose reference contains PATTERN; empty if none.
archive_with_image() { # DIR PATTERN
  local f
  for f in "$1"/*.tar; do
    [[ -f ${f} ]] || continue
    if archive_tags "${f}" | grep -qF -- "$2"; then
      printf '%s\n' "${f}"
      return 0
    fi
  done
}

# Imports every image tarball of DIR into the node's containerd (an air-gapped cluster's way
# to get the real images), then checks each image ID against DIR/IMAGE-IDS when present.
import_image_archives() { # SOCK DIR
  local sock=$1 dir=$2 f n=0 name ref id got
  [[ -d ${dir} ]] || die "CSIOP_IMAGE_ARCHIVES=${dir} is not a directory"
  for f in "${dir}"/*.tar; do
    [[ -f ${f} ]] || continue
    ctr -n k8s.io --address "${sock}" images import "${f}" >/dev/null || die "ctr images import ${f} failed"
    n=$((n + 1))
  done
  ((n > 0)) || die "CSIOP_IMAGE_ARCHIVES=${dir} holds no *.tar image archive"
  log "imported ${n} image archive(s) from ${dir}"
  [[ -f "${dir}/IMAGE-IDS" ]] || return 0
  while read -r name ref id; do
    [[ -n ${ref} && ${name} != \#* ]] || continue
    got=$(ctr -n k8s.io --address "${sock}" images ls "name==${ref}" 2>/dev/null \
      | awk 'NR > 1 { print $3 }')
    # ctr lists the manifest digest; the image ID is the config digest.
    got=$(ctr -n k8s.io --address "${sock}" content get "${got}" 2>/dev/null | jq -r '.config.digest' 2>/dev/null)
    [[ ${got} == "${id}" ]] || die "${ref}: image ID ${got:-none} on the node, ${id} in ${dir}/IMAGE-IDS"
  done <"${dir}/IMAGE-IDS"
  log "the node's images match ${dir}/IMAGE-IDS"
}
