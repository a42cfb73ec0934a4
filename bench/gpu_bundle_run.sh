#!/usr/bin/env bash
# run_gpu_bench.sh (bench/gpu_bundle_run.sh in the repository): runs the
# bundle's bench/gpu_bench.sh with its prebuilt binaries on a GPU host that
# has no Bazel and none of Debian 12's libraries. Made by bench/gpu_bundle.sh;
# run from anywhere:
#
#   bash /tmp/tf/run_gpu_bench.sh [gpu_bench.sh arguments, e.g. --trials 100 --json out.json]
#
# It prints the host's glibc, GPUs and what the bundle needs; finds the CUDA
# driver (libcuda.so.1, opened by name by kernel_runtime/cuda_driver.cc) and
# cuBLAS (libcublas.so.13/.12/.11 or libcublas.so, opened by name by
# bench/cublas_sgemm.cc) and puts their directories, and only those, into
# LD_LIBRARY_PATH (the bundle's own libraries come through RUNPATH, so the
# host's tools keep theirs); uses the bundle's libstdc++ only where the
# host's is too old; checks that every binary resolves; then runs the
# bundle's bench/gpu_bench.sh (the one of the commit in MANIFEST) with
# BAZEL set to the bundle's stand-in. GPU_BENCH=<path> runs another copy.
#
# Measurement defaults for a time-boxed run (override through the
# environment): NUMBER=1 REPEAT=3 MIN_REPEAT_MS=50 (gpu_bench.sh alone uses
# 4/3/150); TIMEOUT and SANDBOX as gpu_bench.sh.
set -euo pipefail

HERE="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
say() { echo "run_gpu_bench: $*" >&2; }
die() { say "$*"; exit 1; }
[[ -f "$HERE/NEEDS" && -x "$HERE/bin/cli/tunefleet" ]] || die "$HERE is not an unpacked gpu_bundle"
# shellcheck source=/dev/null
source "$HERE/NEEDS"
sed -n '1,2p' "$HERE/MANIFEST" | sed 's/^/bundle: /' >&2

# ---- glibc. --------------------------------------------------------------------
HOST_GLIBC_LINE="$(ldd --version 2>&1 | sed -n 1p)"
say "host: $HOST_GLIBC_LINE; $(uname -srm)"
say "the bundle needs ${GLIBC_NEEDED:-?} and ${GLIBCXX_NEEDED:-?}"
host_glibc="$(grep -o '[0-9][0-9]*\.[0-9][0-9]*$' <<<"$HOST_GLIBC_LINE" || true)"
if [[ -n "$host_glibc" && -n "${GLIBC_NEEDED:-}" ]]; then
  lowest="$(printf '%s\n%s\n' "${GLIBC_NEEDED#GLIBC_}" "$host_glibc" | sort -V | sed -n 1p)"
  [[ "$lowest" == "${GLIBC_NEEDED#GLIBC_}" ]] ||
    die "this host's glibc $host_glibc is older than the bundle's ${GLIBC_NEEDED}"
fi

# ---- GPUs. ---------------------------------------------------------------------
if command -v nvidia-smi >/dev/null; then
  nvidia-smi -L >&2 || say "nvidia-smi -L failed"
  nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.max.sm --format=csv >&2 || true
else
  say "no nvidia-smi on PATH"
fi

# ---- LD_LIBRARY_PATH: the CUDA driver and cuBLAS directories. -------------------
LIBRARY_DIRS=()
add_dir() {
  local dir
  dir="$(readlink -f "$1")"
  case "$dir" in
    # Where ld.so looks anyway: putting them first would override the
    # bundle's RUNPATH. stubs/ holds a libcuda that only links.
    /lib | /lib64 | /usr/lib | /usr/lib64 | /lib/x86_64-linux-gnu | /usr/lib/x86_64-linux-gnu | */stubs) return ;;
  esac
  local known
  for known in "${LIBRARY_DIRS[@]}"; do [[ "$known" == "$dir" ]] && return; done
  LIBRARY_DIRS+=("$dir")
}
# The loader's cache (ldconfig is often outside a plain PATH).
ldconfig_p() {
  local tool
  for tool in ldconfig /sbin/ldconfig /usr/sbin/ldconfig; do
    if command -v "$tool" >/dev/null; then "$tool" -p 2>/dev/null || true; return; fi
  done
}
cuda_driver=""
IFS=':' read -r -a inherited <<<"${LD_LIBRARY_PATH:-}"
for dir in "${inherited[@]}" /usr/local/nvidia/lib64 /usr/local/nvidia/lib \
  /usr/lib/x86_64-linux-gnu /usr/lib64 /lib/x86_64-linux-gnu; do
  [[ -n "$dir" && "$dir" != */stubs ]] || continue
  if [[ -e "$dir/libcuda.so.1" ]]; then cuda_driver="$dir/libcuda.so.1"; break; fi
done
if [[ -z "$cuda_driver" ]]; then
  cuda_driver="$(ldconfig_p | awk '/libcuda\.so\.1 .*x86-64/ { print $NF; exit }')"
fi
if [[ -z "$cuda_driver" ]]; then
  cuda_driver="$(timeout 60 find / -xdev -name libcuda.so.1 -not -path '*/stubs/*' \
    -not -path '*/compat/*' 2>/dev/null | head -1 || true)"
fi
if [[ -n "$cuda_driver" ]]; then
  say "CUDA driver: $cuda_driver -> $(readlink -f "$cuda_driver")"
  add_dir "$(dirname "$cuda_driver")"
else
  say "no libcuda.so.1 found: gpu_info will report no GPU"
fi

# cuBLAS: the toolkit's, then pip wheels' (nvidia/cublas/lib, nvidia/cu13/lib),
# then anywhere on the root file system; directories with libcublas.so.13 first.
cublas_candidates() {
  local dir
  for dir in ${CUDA_HOME:+"$CUDA_HOME/lib64"} /usr/local/cuda/lib64 /usr/local/cuda-*/lib64 \
    /usr/local/cuda*/targets/x86_64-linux/lib; do
    ls "$dir"/libcublas.so* 2>/dev/null || true
  done
  find /opt /usr/local /usr/lib/python3* /root/.local -name 'libcublas.so*' 2>/dev/null || true
}
mapfile -t cublas_files < <(cublas_candidates | grep -v '/stubs/' | sort -u)
if [[ ${#cublas_files[@]} -eq 0 ]]; then
  mapfile -t cublas_files < <(timeout 120 find / -xdev -name 'libcublas.so*' -not -path '*/stubs/*' \
    2>/dev/null | head -20 || true)
fi
for want in 'libcublas.so.13*' 'libcublas.so.12*' 'libcublas.so.11*' 'libcublas.so'; do
  for file in "${cublas_files[@]}"; do
    # shellcheck disable=SC2053
    [[ "$(basename "$file")" == $want ]] && add_dir "$(dirname "$file")"
  done
done
if [[ ${#cublas_files[@]} -gt 0 ]]; then
  say "cuBLAS: ${cublas_files[*]}"
else
  say "no libcublas.so* found: the cuBLAS reference will be missing from the report"
fi
# The CUDA runtime's siblings (a cuBLAS wheel may want nvidia/cuda_runtime/lib).
for dir in "${LIBRARY_DIRS[@]}"; do
  case "$dir" in
    */nvidia/cublas/lib)
      for sibling in "${dir%/cublas/lib}"/{cuda_runtime,cuda_nvrtc}/lib; do
        [[ -d "$sibling" ]] && add_dir "$sibling"
      done
      ;;
  esac
done

# libstdc++/libgcc_s: the host's when it has the newest version the bundle
# uses (so cuBLAS and the bundle share one), else the bundle's.
host_libstdcxx="$(ldconfig_p | awk '/libstdc\+\+\.so\.6 .*x86-64/ { print $NF; exit }')"
if [[ -z "$host_libstdcxx" ]]; then
  for file in /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /usr/lib64/libstdc++.so.6; do
    [[ -e "$file" ]] && { host_libstdcxx="$file"; break; }
  done
fi
COMPAT=""
if [[ -n "$host_libstdcxx" && -n "${GLIBCXX_NEEDED:-}" ]] &&
  grep -qaFw "${GLIBCXX_NEEDED}" "$host_libstdcxx"; then
  say "libstdc++: the host's $host_libstdcxx (has ${GLIBCXX_NEEDED})"
else
  say "libstdc++: the bundle's (the host's ${host_libstdcxx:-none} lacks ${GLIBCXX_NEEDED:-?})"
  COMPAT="$HERE/lib/compat"
fi

# Inherited entries that hold a library the bundle has would shadow it.
KEPT=()
for dir in "${inherited[@]}"; do
  [[ -n "$dir" && -d "$dir" ]] || continue
  dir="$(readlink -f "$dir")"
  [[ " ${LIBRARY_DIRS[*]} ${KEPT[*]} " == *" $dir "* ]] && continue
  shadows=""
  for lib in "$HERE"/lib/*.so*; do
    [[ -e "$dir/$(basename "$lib")" ]] && { shadows="$(basename "$lib")"; break; }
  done
  if [[ -n "$shadows" ]]; then
    say "dropping $dir from LD_LIBRARY_PATH (it has $shadows)"
  else
    KEPT+=("$dir")
  fi
done
ALL_DIRS=(${COMPAT:+"$COMPAT"} "${LIBRARY_DIRS[@]}" "${KEPT[@]}")
LD_LIBRARY_PATH="$(IFS=:; echo "${ALL_DIRS[*]}")"
export LD_LIBRARY_PATH
say "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"

# ---- Every binary resolves, and the bundle's libraries come from the bundle. ----
for binary in "$HERE"/bin/*/*; do
  resolved="$(ldd "$binary" 2>&1)" || die "ldd $binary failed: $resolved"
  if grep -q "not found" <<<"$resolved"; then
    die "$binary: $(grep "not found" <<<"$resolved" | tr -s ' \t' ' ' | head -5)"
  fi
  for lib in "$HERE"/lib/*.so*; do
    name="$(basename "$lib")"
    from="$(awk -v n="$name" '$1 == n && $2 == "=>" { print $3 }' <<<"$resolved")"
    [[ -z "$from" || "$(readlink -f "$from")" == "$HERE/lib/$name" ]] ||
      say "warning: $(basename "$binary") takes $name from $from, not the bundle"
  done
done
say "all $(ls "$HERE"/bin/*/* | wc -l) binaries resolve"

# ---- PATH, the Bazel stand-in, the runner, the measurement defaults. -------------
for dir in ${CUDA_HOME:+"$CUDA_HOME/bin"} /usr/local/cuda/bin; do
  [[ -d "$dir" ]] && PATH="$PATH:$dir"
done
export PATH
export BAZEL="$HERE/bazel"
export TUNEFLEET_RUNNER="$HERE/bin/kernel_runtime/tunefleet_runner"
export NUMBER="${NUMBER:-1}" REPEAT="${REPEAT:-3}" MIN_REPEAT_MS="${MIN_REPEAT_MS:-50}"
command -v python3 >/dev/null || die "python3 is needed for gpu_bench.sh's report"
GPU_BENCH="${GPU_BENCH:-$HERE/bench/gpu_bench.sh}"
say "running $GPU_BENCH $* (NUMBER=$NUMBER REPEAT=$REPEAT MIN_REPEAT_MS=$MIN_REPEAT_MS)"
exec bash "$GPU_BENCH" "$@"
