#!/usr/bin/env bash
# Every function that returns absl::Status or absl::StatusOr is declared
# [[nodiscard]] (STYLE.md: errors are values, never silent). Out-of-line
# definitions (Class::Method) and lambdas carry it from their declaration.
# The first line of a declaration is checked. A local Status variable is
# initialised with = or {} (`absl::Status s{code, msg}`), never with (), so
# that it cannot be read as a function declaration here.
set -uo pipefail
source "$(dirname "$0")/source_files.sh"
pattern='^\s*((static|virtual|inline|constexpr|explicit)\s+)*(::)?absl::Status(Or<.*>)?\s+[A-Za-z_][A-Za-z_0-9]*\s*\('
missing="$(grep -nE "$pattern" "${CXX_FILES[@]}" | grep -v 'nodiscard' | grep -v '^[^:]*:[0-9]*:\s*//')"
if [[ -n "$missing" ]]; then
  echo "functions returning absl::Status(Or) without [[nodiscard]]:"
  echo "$missing"
  echo "$(echo "$missing" | wc -l) declarations to fix"
  exit 1
fi
echo "${#CXX_FILES[@]} files checked: every Status-returning declaration is [[nodiscard]]"
