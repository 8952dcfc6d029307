# The csi-operator image: built and run on Debian bookworm (slim).
#
#   docker build -t ghcr.io/csiop/csi-operator:0.1.0 .
#
# Both stages use the same release, so the shared libraries the binary was
# linked against (sonames in the package names: libfmt9, libssl3, ...) are
# exactly the ones the runtime stage installs. Pinned by tag; pin by digest too
# (debian:bookworm-slim@sha256:...) for byte-for-byte reproducible builds.

# --- Build ---------------------------------------------------------------------
# bookworm-slim rather than bookworm: everything the build needs is installed
# below anyway, and the slim base is the smaller download.
FROM debian:bookworm-slim AS build

# The build packages of scripts/install-deps, without the test and tooling ones
# that configure does not need (benchmark, clang, git, curl, jq...). GTest and
# GMock are there because the top-level CMakeLists.txt requires GTest even when
# no test is built.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential \
      cmake \
      ninja-build \
      pkg-config \
      libboost1.81-dev \
      libboost-url1.81-dev \
      libssl-dev \
      nlohmann-json3-dev \
      libsimdjson-dev \
      libyaml-cpp-dev \
      libspdlog-dev \
      libfmt-dev \
      libcli11-dev \
      prometheus-cpp-dev \
      libgtest-dev \
      libgmock-dev \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY . .
# Only the operator binary: no tests, no benchmarks, no end-to-end harness.
# RelWithDebInfo (-O2) is the build type every test runs against; strip removes
# the debug information.
RUN cmake -S . -B /build -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCSIOP_E2E=OFF -DCSIOP_BUILD_BENCH=OFF \
 && cmake --build /build --target csi-operator \
 && strip --strip-unneeded -o /csi-operator /build/cli/csi-operator

# --- Runtime -------------------------------------------------------------------
FROM debian:bookworm-slim

# The version is the project(VERSION) of the top-level CMakeLists.txt, which the
# binary reports (`csi-operator version`); keep the two equal.
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="csi-operator" \
      org.opencontainers.image.description="Kubernetes operator that turns a DriverDeployment (csiop.dev/v1alpha1) into a complete CSI driver: CSIDriver, node and controller plugins, sidecars, RBAC, StorageClasses" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.base.name="debian:bookworm-slim"

# The shared libraries of the binary that bookworm-slim lacks (it has libc6,
# libgcc-s1 and libstdc++6): ldd of the binary mapped to packages with dpkg -S.
# test/image/runtime_libs_test.sh checks that this list covers the binary.
# ca-certificates: the Kubernetes client falls back to the system trust store
# when a kubeconfig names no certificate authority (in-cluster it uses the
# service account's ca.crt).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates \
      libboost-url1.81.0 \
      libfmt9 \
      libprometheus-cpp-core1.0 \
      libsimdjson14 \
      libspdlog1.10 \
      libssl3 \
      libyaml-cpp0.7 \
 && rm -rf /var/lib/apt/lists/*

COPY --from=build /csi-operator /usr/local/bin/csi-operator

# Numeric, so that Kubernetes' runAsNonRoot can verify it without /etc/passwd
# (65532: the conventional "nonroot" uid of distroless images). The operator
# writes nothing to disk, so a read-only root filesystem works.
USER 65532:65532

# Webhook (HTTPS; `run --webhook-port=9443`, the default of `webhook`),
# metrics (:8080) and health probes (:8081).
EXPOSE 9443 8080 8081

# For `docker run`; Kubernetes ignores it and uses the chart's probes.
HEALTHCHECK --interval=30s --timeout=5s \
  CMD ["/usr/local/bin/csi-operator", "probe", "http://127.0.0.1:8081/healthz"]

# Exec form: no shell runs between the container runtime and the operator, so
# SIGTERM reaches it directly.
ENTRYPOINT ["/usr/local/bin/csi-operator"]
CMD ["run"]
