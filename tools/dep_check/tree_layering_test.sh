#!/usr/bin/env bash
# Checks the whole tree's dependency graph against tools/dep_check/layers.txt,
# then shows that the check fails once a forbidden edge is added to that graph.
# scripts/test.sh writes the graph with `bazel query` (a test cannot run Bazel)
# and passes its path in TUNEFLEET_DEP_GRAPH.
set -uo pipefail
check="$1"
rules="$2"
graph="${TUNEFLEET_DEP_GRAPH:-}"
if [[ -z "$graph" || ! -s "$graph" ]]; then
  echo "TUNEFLEET_DEP_GRAPH is not set or empty: run this test through scripts/test.sh," >&2
  echo "which writes the graph with bazel query first" >&2
  exit 1
fi
echo "== the tree as it is"
if ! "$check" --rules "$rules" --graph "$graph"; then
  echo "FAIL: the tree has forbidden dependencies (above)" >&2
  exit 1
fi
echo "== the tree plus a deliberately forbidden edge //common:logging -> //tracker:scheduler"
bad="${TEST_TMPDIR:-/tmp}/graph_with_forbidden_edge.txt"
cp "$graph" "$bad"
echo '  "//common:logging" -> "//tracker:scheduler"' >> "$bad"
out="$("$check" --rules "$rules" --graph "$bad")"
rc=$?
echo "$out"
if [[ $rc -ne 1 || "$out" != *"//common:logging -> //tracker:scheduler"* ]]; then
  echo "FAIL: the forbidden edge was not reported (rc $rc)" >&2
  exit 1
fi
echo "PASS"
