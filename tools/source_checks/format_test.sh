#!/usr/bin/env bash
# Every C++ file follows the root .clang-format (clang-format-19, which
# scripts/install_deps.sh installs). Fix with:
#   clang-format-19 -i $(git ls-files '*.cc' '*.h' | grep -v ^third_party/)
set -uo pipefail
source "$(dirname "$0")/source_files.sh"
formatter="$(command -v clang-format-19 || true)"
if [[ -z "$formatter" ]]; then
  echo "clang-format-19 is not installed (apt-get install clang-format-19)" >&2
  exit 1
fi
# One run over every file; each file that would change is named in a
# "FILE:LINE:COL: error: code should be clang-formatted" line.
mapfile -t unformatted < <("$formatter" --dry-run --Werror "${CXX_FILES[@]}" 2>&1 |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
echo "${#CXX_FILES[@]} files checked, ${#unformatted[@]} not formatted"
if ((${#unformatted[@]})); then
  printf '  %s\n' "${unformatted[@]}"
  echo "fix: clang-format-19 -i FILE..." >&2
  exit 1
fi
