#!/usr/bin/env bash
# No hand-written source file over 600 lines (issue 15): a file that long does
# more than one job. Tests (*_test.cc) are exempt; generated code is not in
# the tree.
set -uo pipefail
source "$(dirname "$0")/source_files.sh"
limit=600
long=()
for f in "${CXX_FILES[@]}"; do
  [[ "$f" == *_test.cc ]] && continue
  n=$(wc -l < "$f")
  if ((n > limit)); then long+=("$f: $n lines"); fi
done
echo "${#CXX_FILES[@]} files checked, ${#long[@]} over $limit lines"
if ((${#long[@]})); then
  printf '  %s\n' "${long[@]}"
  exit 1
fi
