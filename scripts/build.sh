#!/usr/bin/env bash
# Installs dependencies and builds the TuneFleet command-line binary offline.
#   ./scripts/build.sh                      # builds $TARGET (default //cli:tunefleet)
#   TARGET=//device_agent/... ./scripts/build.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

TARGET="${TARGET:-//cli:tunefleet}"

# The CLI needs only the demo's packages; anything else may need the tests'.
if [[ "$TARGET" == "//cli:tunefleet" ]]; then ./scripts/install_deps.sh demo; else ./scripts/install_deps.sh test; fi
bazel build --color=no --curses=no "$@" -- "$TARGET"
