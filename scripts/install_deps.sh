#!/usr/bin/env bash
# Installs every Debian package TuneFleet needs to build, test and benchmark,
# skipping the ones already present. Safe to run repeatedly.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap
  build-essential
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev
  llvm-19-dev lld-19
  libxgboost-dev
  prometheus-cpp-dev
  prometheus  # promtool, for `promtool check metrics` in tracker/metrics_test
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-format-19  # //tools/source_checks:format_test
  libsqlite3-dev nlohmann-json3-dev
  libonnx-dev  # ONNX import (tuner_core/graph): the ONNX schema and shape inference
  # The ONNX exports the model-level tests read (tuner_core/graph/export_onnx.py)
  python3-torch python3-torchvision python3-onnx
  libopenblas-dev libdnnl-dev
  gnuplot-nox
  zlib1g-dev libzstd-dev libcurl4-openssl-dev libedit-dev libxml2-dev libffi-dev
  # AArch64 boards: the cross-built agent (//device_agent/aarch64:agent) links
  # Debian's arm64 multiarch libraries; tests run it under qemu-aarch64.
  g++-aarch64-linux-gnu qemu-user
  libgrpc++-dev:arm64 libprotobuf-dev:arm64 libabsl-dev:arm64
  # The runner child's seccomp sandbox (device_agent/sandbox.h), both arches.
  libseccomp-dev libseccomp-dev:arm64
  # TLS diagnosis (rpc/tls_diagnosis.h) and the test PKI: OpenSSL 3.
  libssl-dev
)

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi

# arm64 packages need the architecture enabled (then a fresh apt-get update,
# which the install below does whenever something is missing).
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "install_deps: enabling the arm64 architecture (dpkg multiarch)"
  $SUDO dpkg --add-architecture arm64
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "install_deps: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install_deps: all packages present"
fi
