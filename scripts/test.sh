#!/usr/bin/env bash
# Installs dependencies, runs every Bazel test offline and prints one summary
# line "N passed, N failed" counted from Bazel's test summary.
#
#   ./scripts/test.sh                 # bazel test //...
#   ./scripts/test.sh //common/...    # a subset (any bazel test patterns)
#
# Exit status: 0 only if the build succeeded, at least one test ran, and no
# test failed (FAILED, TIMEOUT, NO STATUS, FAILED TO BUILD, ... count as failed).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

./scripts/install_deps.sh test || { echo "test.sh: install_deps.sh failed" >&2; echo "0 passed, 0 failed"; exit 1; }

LOG="${TUNEFLEET_TEST_LOG:-$ROOT/logs/bazel-test.log}"
mkdir -p "$(dirname "$LOG")"

targets=("$@")
test_env=()
if ((${#targets[@]} == 0)); then
  targets=(//...)
  # The layering check needs the whole dependency graph, which only Bazel's
  # query can print and no test can run: write it here and hand the test its
  # path. A query that fails leaves the file empty, and the test fails.
  GRAPH="$(dirname "$LOG")/dep_graph.txt"
  bazel query --output=graph --nograph:factored --noimplicit_deps 'deps(//...)' \
    >"$GRAPH" 2>"$GRAPH.err" || { cat "$GRAPH.err" >&2; : >"$GRAPH"; }
  targets+=(//tools/dep_check:tree_layering_test)
  test_env=(--test_env=TUNEFLEET_DEP_GRAPH="$GRAPH")
fi

bazel test --test_output=errors --keep_going --color=no --curses=no "${test_env[@]}" \
  -- "${targets[@]}" 2>&1 | tee "$LOG"
bazel_rc=${PIPESTATUS[0]}

# Bazel prints test output (--test_output=errors) while it runs and the test
# summary after the final "Elapsed time:" line; count only the summary, one
# entry per label.
summary="$(awk '/INFO: Elapsed time:/ { buf = ""; seen = 1; next } seen { buf = buf $0 "\n" } END { printf "%s", buf }' "$LOG")"

declare -A status=()
while IFS= read -r line; do
  if [[ "$line" =~ ^((@[^[:space:]]*)?//[^[:space:]]+)[[:space:]]+(\(cached\)[[:space:]]+)?(PASSED|FLAKY|FAILED\ TO\ BUILD|FAILED|TIMEOUT|NO\ STATUS|INCOMPLETE|REMOTE\ FAILURE|SKIPPED|BUILD) ]]; then
    label="${BASH_REMATCH[1]}"
    result="${BASH_REMATCH[4]}"
    status["$label"]="$result"
  fi
done <<<"$summary"

passed=0
failed=0
for label in "${!status[@]}"; do
  case "${status[$label]}" in
    PASSED|FLAKY) passed=$((passed + 1)) ;;   # Bazel counts FLAKY (passed on retry) as a pass
    *) failed=$((failed + 1)) ;;
  esac
done

# Cross-check with "Executed N out of M tests": tests Bazel counted but did
# not list are failures.
if [[ "$summary" =~ Executed\ [0-9]+\ out\ of\ ([0-9]+)\ tests? ]]; then
  total="${BASH_REMATCH[1]}"
  if ((total > passed + failed)); then
    failed=$((total - passed))
  fi
fi

echo "log: $LOG"
rc=0
if ((bazel_rc != 0)); then
  echo "bazel test exited with status $bazel_rc"
  rc=1
fi
if ((passed + failed == 0)); then
  echo "no tests ran"
  rc=1
fi
if ((failed > 0)); then rc=1; fi
echo "${passed} passed, ${failed} failed"
exit "$rc"
