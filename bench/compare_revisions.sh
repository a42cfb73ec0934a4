#!/usr/bin/env bash
# Interleaved A/B of //bench:dense_bench and //bench:fleet_bench between two
# built trees: base, new, base, new, ... (ROUNDS rounds of each bench), with
# identical flags, then a table of the headline figures (median per revision).
#
#   bench/compare_revisions.sh BASE_BIN NEW_BIN
#     each the bazel-bin of a checkout where //bench:dense_bench and
#     //bench:fleet_bench are built, e.g. for an older revision:
#       git worktree add /tmp/base REV && cd /tmp/base &&
#       bazel --output_base=/tmp/base_ob build //bench:dense_bench //bench:fleet_bench
#
# Env knobs (defaults = short but meaningful run, ~10-12 min in all):
#   ROUNDS=3
#   BENCHES="dense fleet"
#   DENSE_FLAGS="--shapes=512,512,512 --threads=2 --trials=200 --rounds=5 --seed=1"
#   FLEET_FLAGS="--parts=overhead,throughput,dispatch"   (fleet flags are the defaults:
#               overhead dense 256^3, 64 grid trials, 3 rounds; agents 1,4,16,64;
#               dispatch 1000 sim agents x 10 jobs x 300 trials)
#   OUT=$TMPDIR/tunefleet_compare
#   SUMMARY_ONLY=1   only print the table from the JSON already in $OUT
#   PREFLIGHT_ONLY=1 only check both trees' binaries and runfiles, run nothing
#
# Both revisions accept exactly the same flags for both benches (checked in
# the sources). Binaries are run the way `bazel run` does: from their real
# path in the output base, cwd = <exe>.runfiles/tunefleet, RUNFILES_DIR set
# to <exe>.runfiles. Variables that could make one tree pick up the other
# tree's helpers (TUNEFLEET_RUNNER, TUNEFLEET_BIN_DIR, TEST_SRCDIR) are
# cleared; TUNEFLEET_RUNNER is then set to that tree's own runner.
set -u

if [ $# -lt 2 ]; then
  echo "usage: $0 BASE_BIN NEW_BIN (two bazel-bin folders with the benches built)" >&2
  exit 2
fi
BASE_BIN=$1
NEW_BIN=$2
OUT=${OUT:-${TMPDIR:-/tmp}/tunefleet_compare}
ROUNDS=${ROUNDS:-3}
BENCHES=${BENCHES:-"dense fleet"}
DENSE_FLAGS=${DENSE_FLAGS:-"--shapes=512,512,512 --threads=2 --trials=200 --rounds=5 --seed=1"}
FLEET_FLAGS=${FLEET_FLAGS:-"--parts=overhead,throughput,dispatch"}

mkdir -p "$OUT" || exit 1

bin_of() { case "$1" in base) echo "$BASE_BIN" ;; new) echo "$NEW_BIN" ;; esac; }
flags_of() { case "$1" in dense) echo "$DENSE_FLAGS" ;; fleet) echo "$FLEET_FLAGS" ;; esac; }

# Checks that <bin>/bench/<bench> and every file in its runfiles manifest exist.
preflight() {
  local rev=$1 bench=$2 bin exe manifest missing=0
  bin=$(bin_of "$rev")
  exe=$(readlink -f "$bin/bench/${bench}_bench") || { echo "$rev: no $bin/bench/${bench}_bench" >&2; return 1; }
  [ -x "$exe" ] || { echo "$rev: $exe not executable" >&2; return 1; }
  manifest="$exe.runfiles_manifest"
  [ -d "$exe.runfiles/tunefleet" ] || { echo "$rev: no runfiles tree $exe.runfiles" >&2; return 1; }
  if [ -f "$manifest" ]; then
    while read -r name target; do
      [ -n "$target" ] || continue
      if [ ! -e "$target" ] || [ ! -e "$exe.runfiles/$name" ]; then
        echo "$rev: runfile missing: $name -> $target" >&2; missing=1
      fi
    done < "$manifest"
  fi
  [ -x "$exe.runfiles/tunefleet/kernel_runtime/tunefleet_runner" ] ||
    { echo "$rev: no tunefleet_runner in $exe.runfiles" >&2; missing=1; }
  [ "$bench" != dense ] || [ -x "$(dirname "$exe")/openblas_sgemm" ] ||
    { echo "$rev: no openblas_sgemm beside $exe" >&2; missing=1; }
  return $missing
}

describe() {
  local rev=$1 bin tree
  bin=$(bin_of "$rev")
  tree=$(dirname "$bin")
  echo "$rev: $bin -> $(readlink -f "$bin")"
  echo "      tree $(git -C "$tree" log -1 --format='%h %cd %s' --date=iso 2>/dev/null | cut -c1-90)," \
       "$(git -C "$tree" status --short --untracked-files=no 2>/dev/null | wc -l) modified tracked files"
  for b in $BENCHES; do
    echo "      ${b}_bench built $(stat -c %y "$(readlink -f "$bin/bench/${b}_bench")" 2>/dev/null | cut -c1-19)"
  done
}

run_one() {
  local rev=$1 bench=$2 round=$3 bin exe rf json log tmp t0 rc
  bin=$(bin_of "$rev")
  exe=$(readlink -f "$bin/bench/${bench}_bench")
  rf="$exe.runfiles"
  json="$OUT/${rev}_${bench}_${round}.json"
  log="$OUT/${rev}_${bench}_${round}.log"
  tmp="$OUT/tmp/${rev}_${bench}_${round}"
  rm -f "$json"; rm -rf "$tmp"; mkdir -p "$tmp"
  t0=$(date +%s)
  printf '%s %-4s %-5s round %d (load %s) ... ' "$(date -u +%H:%M:%S)" "$rev" "$bench" "$round" \
    "$(cut -d' ' -f1 /proc/loadavg)"
  # Own session/process group, so fleet processes left behind by a failed
  # run (tracker, builder, agents, tuner) are ended by that group's id.
  # shellcheck disable=SC2046
  (cd "$rf/tunefleet" &&
   exec setsid -w env -u TUNEFLEET_BIN_DIR -u TEST_SRCDIR -u RUNFILES_MANIFEST_FILE \
       RUNFILES_DIR="$rf" TUNEFLEET_RUNNER="$rf/tunefleet/kernel_runtime/tunefleet_runner" \
       TEST_TMPDIR="$tmp" \
       "$exe" $(flags_of "$bench") --json="$json") > "$log" 2>&1 &
  CHILD=$!
  wait "$CHILD"
  rc=$?
  kill -TERM -- "-$CHILD" 2>/dev/null && sleep 1 && kill -KILL -- "-$CHILD" 2>/dev/null
  CHILD=
  echo "rc=$rc, $(( $(date +%s) - t0 )) s"
  if [ $rc -ne 0 ]; then
    echo "  FAILED, last lines of $log:"; tail -5 "$log" | sed 's/^/    /'
  else
    rm -rf "$tmp"   # fleet dirs (tracker db, logs, artifacts); kept on failure
  fi
}

CHILD=
trap '[ -n "$CHILD" ] && kill -TERM -- "-$CHILD" 2>/dev/null; echo interrupted; exit 130' INT TERM

if [ "${SUMMARY_ONLY:-0}" != 1 ]; then
  for rev in base new; do describe "$rev"; done
  ok=1
  for rev in base new; do for b in $BENCHES; do preflight "$rev" "$b" || ok=0; done; done
  [ $ok = 1 ] || { echo "preflight failed; build the missing targets first" >&2; exit 1; }
  [ "${PREFLIGHT_ONLY:-0}" != 1 ] || { echo "preflight ok"; exit 0; }
  echo "dense flags: $DENSE_FLAGS"
  echo "fleet flags: $FLEET_FLAGS"
  echo "output: $OUT"
  start=$(date +%s)
  for round in $(seq 1 "$ROUNDS"); do
    for b in $BENCHES; do
      for rev in base new; do run_one "$rev" "$b" "$round"; done
    done
  done
  echo "total $(( $(date +%s) - start )) s"
fi

OUT="$OUT" ROUNDS="$ROUNDS" python3 - <<'EOF'
import json, os, statistics
out, rounds = os.environ["OUT"], int(os.environ["ROUNDS"])
def load(rev, bench):
    res = []
    for r in range(1, rounds + 1):
        p = f"{out}/{rev}_{bench}_{r}.json"
        try:
            res.append(json.load(open(p)))
        except Exception:
            pass
    return res
def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None
def fmt(x, nd=2):
    return "-" if x is None else f"{x:.{nd}f}"
rows = []  # (label, base values, new values, decimals)
def add(label, fn, nd=2):
    vals = {}
    for rev in ("base", "new"):
        v = []
        for j in data[rev]:
            try: v.append(fn(j))
            except Exception: v.append(None)
        vals[rev] = v
    rows.append((label, vals["base"], vals["new"], nd))
for bench in ("dense", "fleet"):
    data = {rev: load(rev, bench) for rev in ("base", "new")}
    if not data["base"] and not data["new"]:
        continue
    rows.clear()
    if bench == "dense":
        keys = []
        for rev in data:
            for j in data[rev]:
                for c in j.get("cases", []):
                    k = ("x".join(map(str, c["shape"])), c["threads"])
                    if k not in keys: keys.append(k)
        for shape, thr in keys:
            def case(j, shape=shape, thr=thr):
                return next(c for c in j["cases"] if "x".join(map(str, c["shape"])) == shape and c["threads"] == thr)
            t = f"{shape} t{thr}"
            add(f"{t} best GFLOPS (tuning)", lambda j: case(j)["tuning_best_gflops"], 1)
            add(f"{t} re-measured GFLOPS", lambda j: case(j)["tuned_gflops_median"], 1)
            add(f"{t} OpenBLAS GFLOPS (ref)", lambda j: case(j)["reference_gflops"], 1)
            add(f"{t} % of OpenBLAS", lambda j: 100 * case(j)["ratio_to_openblas"], 1)
            add(f"{t} local ovh ms/trial", lambda j: case(j)["local_overhead_ms_per_trial"], 2)
            add(f"{t} build ms/cand (med)", lambda j: case(j)["build_ms_median_all_candidates"], 1)
            add(f"{t} tuning wall s", lambda j: case(j)["tuning_wall_seconds"], 1)
    else:
        add("overhead ms/trial (median)", lambda j: j["overhead"]["overhead_ms_per_trial_median"], 2)
        add("  local ms/trial", lambda j: j["overhead"]["local_ms_per_trial_median"], 1)
        add("  fleet ms/trial", lambda j: j["overhead"]["fleet_ms_per_trial_median"], 1)
        ns = []
        for rev in data:
            for j in data[rev]:
                for t in j.get("throughput", []):
                    if t["agents"] not in ns: ns.append(t["agents"])
        for n in sorted(ns):
            add(f"trials/s, {n} agents", lambda j, n=n: next(t for t in j["throughput"] if t["agents"] == n)["trials_per_s"], 1)
            add(f"  ratio to {n}x one", lambda j, n=n: next(t for t in j["throughput"] if t["agents"] == n)["ratio_to_n_times_one"], 3)
        add("dispatch p50 ms", lambda j: j["dispatch"]["dispatch_p50_ms"], 3)
        add("dispatch p99 ms", lambda j: j["dispatch"]["dispatch_p99_ms"], 3)
        add("dispatch wall s", lambda j: j["dispatch"]["wall_s"], 1)
    print(f"\n== {bench}_bench (runs found: base {len(data['base'])}, new {len(data['new'])}) ==")
    print(f"{'figure':<40} {'base runs':<24} {'new runs':<24} {'base med':>9} {'new med':>9} {'new/base':>8}")
    for label, b, n, nd in rows:
        mb, mn = med(b), med(n)
        ratio = f"{mn / mb:.3f}" if mb and mn is not None else "-"
        print(f"{label:<40} {' '.join(fmt(x, nd) for x in b):<24} {' '.join(fmt(x, nd) for x in n):<24} "
              f"{fmt(mb, nd):>9} {fmt(mn, nd):>9} {ratio:>8}")
    if bench == "dense":
        for rev in ("base", "new"):
            cs = {json.dumps([c["best_config"] for c in j["cases"]], sort_keys=True) for j in data[rev]}
            print(f"{rev}: {len(cs)} distinct best config set(s) over {len(data[rev])} runs")
        allc = {json.dumps([c["best_config"] for c in j["cases"]], sort_keys=True)
                for rev in data for j in data[rev]}
        print("best configs identical across all runs of both revisions" if len(allc) == 1
              else "best configs differ between runs (tuning-best/re-measured compare different kernels)")
EOF
