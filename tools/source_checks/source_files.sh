#!/usr/bin/env bash
# Sourced by the source checks: finds the source tree behind this test's
# runfiles (the tests run with tags local + external, outside the sandbox and
# never cached) and lists its C++ files, generated code and third_party/ left
# out. Sets SOURCE_ROOT and the array CXX_FILES.
marker="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-tunefleet}/.clang-format"
if [[ ! -e "$marker" ]]; then
  echo "cannot find .clang-format in the runfiles ($marker)" >&2
  exit 1
fi
SOURCE_ROOT="$(dirname "$(readlink -f "$marker")")"
cd "$SOURCE_ROOT" || exit 1
if git -C "$SOURCE_ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # Tracked files plus new ones not ignored, as a reviewer sees the change.
  mapfile -t CXX_FILES < <(git ls-files --cached --others --exclude-standard -- '*.cc' '*.h' |
    grep -v '^third_party/' | while read -r f; do [[ -f "$f" ]] && echo "$f"; done)
else
  mapfile -t CXX_FILES < <(find . -path ./third_party -prune -o -path './bazel-*' -prune -o \
    \( -name '*.cc' -o -name '*.h' \) -print | sed 's|^\./||')
fi
if ((${#CXX_FILES[@]} == 0)); then
  echo "no C++ files found under $SOURCE_ROOT" >&2
  exit 1
fi
