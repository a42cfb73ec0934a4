#!/usr/bin/env bash
# Installs the Debian packages one use of TuneFleet needs, skipping the ones
# already present. Safe to run repeatedly.
#
#   ./scripts/install_deps.sh demo    # build the CLI and daemons, run the demo (scripts/demo.sh)
#   ./scripts/install_deps.sh test    # + what the whole test suite needs (scripts/test.sh)
#   ./scripts/install_deps.sh bench   # + what the benchmarks under bench/ need
#
# Nothing is started: a package that ships a system service (prometheus, for
# promtool) is installed with service starts refused and the unit disabled.
set -euo pipefail

PROFILE="${1:-test}"

# Building //cli:tunefleet, the daemons it starts and the demo's OpenBLAS
# reference.
DEMO_PACKAGES=(
  bazel-bootstrap
  build-essential
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev
  llvm-19-dev lld-19 liblld-19-dev
  # LLVM's own link dependencies
  zlib1g-dev libzstd-dev libcurl4-openssl-dev libedit-dev libxml2-dev libffi-dev
  libxgboost-dev
  prometheus-cpp-dev
  libsqlite3-dev nlohmann-json3-dev
  libpq-dev        # the tracker's PostgreSQL store (replicas sharing one database)
  libonnx-dev      # ONNX import (tuner_core/graph): the ONNX schema and shape inference
  libsodium-dev    # Ed25519 artifact signatures, Argon2id token hashes
  libseccomp-dev   # the runner child's seccomp sandbox (kernel_runtime/sandbox.h)
  libssl-dev       # TLS diagnosis (rpc/tls_diagnosis.h) and the test PKI
  libopenblas-dev  # the demo's reference, bench/openblas_sgemm
)

# `bazel test //...`: every target builds, and the tests' own tools.
TEST_PACKAGES=(
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-format-19  # //tools/source_checks:format_test
  libdnnl-dev      # oneDNN references (bench/onednn_reference, its test)
  # The ONNX exports the model-level tests read (tuner_core/graph/export_onnx.py)
  python3-torch python3-torchvision python3-onnx
  python3-grpcio python3-protobuf  # //clients/python: the Python client and its tests
  python3-yaml     # //deploy:deploy_test reads the Kubernetes manifests
  systemd          # systemd-analyze, for //deploy:deploy_test
  # AArch64 boards: the cross-built agent (//device_agent/aarch64:agent) links
  # Debian's arm64 multiarch libraries; tests run it under qemu-aarch64.
  # prometheus-cpp-dev cannot sit beside the amd64 one (not Multi-Arch:
  # same): its runtime libraries are linked by soname (device_agent/aarch64).
  g++-aarch64-linux-gnu qemu-user
  libgrpc++-dev:arm64 libprotobuf-dev:arm64 libabsl-dev:arm64
  libseccomp-dev:arm64 libsodium-dev:arm64 libssl-dev:arm64
  libprometheus-cpp-core1.0:arm64 libprometheus-cpp-pull1.0:arm64
)
# promtool (`promtool check metrics` in the metrics tests) comes with the
# Prometheus server package, and the PostgreSQL server the store's and the
# tracker replicas' tests start (as their own, on 127.0.0.1) with postgresql;
# neither package's service may start behind the user's back.
SERVICE_PACKAGES=(prometheus postgresql)

BENCH_PACKAGES=(
  gnuplot-nox  # bench/*.png curves
  patchelf     # bench/gpu_bundle.sh: RUNPATH of the bundled binaries and libraries
)

case "$PROFILE" in
  demo) PACKAGES=("${DEMO_PACKAGES[@]}"); SERVICES=() ;;
  test) PACKAGES=("${DEMO_PACKAGES[@]}" "${TEST_PACKAGES[@]}"); SERVICES=("${SERVICE_PACKAGES[@]}") ;;
  bench)
    PACKAGES=("${DEMO_PACKAGES[@]}" "${TEST_PACKAGES[@]}" "${BENCH_PACKAGES[@]}")
    SERVICES=("${SERVICE_PACKAGES[@]}")
    ;;
  *) echo "usage: $0 [demo|test|bench]" >&2; exit 2 ;;
esac

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi

needs_arm64=0
for p in "${PACKAGES[@]}"; do [[ "$p" == *:arm64 ]] && needs_arm64=1; done
# arm64 packages need the architecture enabled (then a fresh apt-get update,
# which the install below does whenever something is missing).
if ((needs_arm64)) && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "install_deps: enabling the arm64 architecture (dpkg multiarch)"
  $SUDO dpkg --add-architecture arm64
fi

missing_of() {
  local p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      echo "$p"
    fi
  done
}

mapfile -t missing < <(missing_of "${PACKAGES[@]}")
mapfile -t missing_services < <(missing_of ${SERVICES[@]+"${SERVICES[@]}"})

if ((${#missing[@]} + ${#missing_services[@]} == 0)); then
  echo "install_deps ($PROFILE): all packages present"
  exit 0
fi
$SUDO apt-get update -q
if ((${#missing[@]})); then
  echo "install_deps ($PROFILE): installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if ((${#missing_services[@]})); then
  echo "install_deps ($PROFILE): installing ${missing_services[*]} without starting its service"
  # policy-rc.d 101 = "action forbidden": invoke-rc.d and deb-systemd-invoke
  # start nothing while it is in place.
  policy=/usr/sbin/policy-rc.d
  had_policy=0
  [[ -e "$policy" ]] && had_policy=1
  if ((!had_policy)); then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
  fi
  status=0
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
    "${missing_services[@]}" || status=$?
  if ((!had_policy)); then $SUDO rm -f "$policy"; fi
  for service in "${missing_services[@]}"; do
    if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
      $SUDO systemctl disable --now "$service" >/dev/null 2>&1 || true
    fi
  done
  exit "$status"
fi
