#!/usr/bin/env bash
# Installs dependencies and builds the TuneFleet command-line binary offline.
#   ./scripts/build.sh                      # builds $TARGET (default //cli:tunefleet)
#   TARGET=//device_agent/... ./scripts/build.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

TARGET="${TARGET:-//cli:tunefleet}"

./scripts/install_deps.sh
bazel build --color=no --curses=no "$@" -- "$TARGET"
