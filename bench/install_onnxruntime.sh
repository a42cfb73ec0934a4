#!/usr/bin/env bash
# Installs ONNX Runtime for Node (npm's onnxruntime-node, which bundles the
# CPU library) into third_party/node/ (gitignored), for
# bench/compiled_model_bench's ONNX Runtime reference. The benchmark never
# downloads anything; without this folder it skips ONNX Runtime and says so.
# Needs node and npm on PATH (Debian: `apt-get install nodejs npm`) and the
# npm registry reachable. Safe to run repeatedly.
#
#   ./bench/install_onnxruntime.sh
set -euo pipefail

VERSION="1.30.0"  # the version bench/results/compiled_model_ort.* were measured with
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="$ROOT/third_party/node"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null; then
    echo "install_onnxruntime: '$tool' not found; install Node.js first (apt-get install nodejs npm)" >&2
    exit 1
  fi
done

installed="$(node -p "require('$PREFIX/node_modules/onnxruntime-node/package.json').version" 2>/dev/null || true)"
if [[ "$installed" == "$VERSION" ]]; then
  echo "install_onnxruntime: onnxruntime-node $VERSION already in $PREFIX"
  exit 0
fi

mkdir -p "$PREFIX"
# CPU only: the package's install script would otherwise fetch the CUDA
# execution provider.
ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install --no-audit --no-fund --save-exact \
  --prefix "$PREFIX" "onnxruntime-node@$VERSION"
node -e "const ort = require('$PREFIX/node_modules/onnxruntime-node'); \
  console.log('install_onnxruntime: onnxruntime-node', require('$PREFIX/node_modules/onnxruntime-node/package.json').version, 'in $PREFIX')"
