#!/usr/bin/env bash
# bench/gpu_bundle.sh: bench/gpu_bench.sh as a self-contained bundle for a
# GPU host that has neither Bazel nor Debian 12's libraries (e.g. an Ubuntu
# image with only the NVIDIA driver, the CUDA toolkit or cuBLAS wheels, and
# python3):
#
#   bench/gpu_bundle.sh [OUT_DIR]        # default OUT_DIR: <repo>/.gpu_bundle
#
# It builds exactly the targets gpu_bench.sh builds, and stages in
# OUT_DIR/stage:
#   bin/<package>/<binary>  the binaries at their bazel-bin paths, so that
#                           `tunefleet up` finds the tracker, builder and
#                           tuner as it does in bazel-bin (common/process.h
#                           FindFleetBinary: <bin>/cli/../<package>/<name>)
#                           and the agent its runner beside itself;
#   lib/                    every shared library they load (ldd closure), by
#                           soname, minus glibc's own and NVIDIA's (libcuda,
#                           libnvidia-*, cuBLAS come from the host);
#   lib/compat/             libstdc++ and libgcc_s, used only where the host's
#                           are older than what the bundle needs;
#   bazel                   a stand-in: `build` does nothing, `info bazel-bin`
#                           prints bin/;
#   bench/                  gpu_bench.sh, gpu_references.py and gpu_report.py
#                           of this tree;
#   run_gpu_bench.sh        bench/gpu_bundle_run.sh: sets up the libraries and
#                           the CUDA paths and runs bench/gpu_bench.sh;
#   NEEDS, MANIFEST         the glibc/libstdc++ versions needed, and what was
#                           bundled from which commit.
# Binaries get RUNPATH $ORIGIN/../../lib and libraries $ORIGIN (patchelf), so
# nothing but the CUDA directories goes into LD_LIBRARY_PATH and the host's
# own tools (python3, grep, ...) keep their libraries. Then it packs the stage
# into OUT_DIR/tunefleet_gpu_bundle.tar.xz. On the GPU host:
#
#   mkdir -p /tmp/tf && tar -xJf tunefleet_gpu_bundle.tar.xz -C /tmp/tf
#   bash /tmp/tf/run_gpu_bench.sh --trials 100 --json /path/gpu_bench.json
#
# Environment: BAZEL (default bazel), XZ_LEVEL (default 9), KEEP_ICU_DATA=1
# (ship ICU's data library instead of a stub; see below), KEEP_STAGE=1 (keep
# OUT_DIR/stage; by default only the tarball stays, ~45 MB).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT_DIR="${1:-$ROOT/.gpu_bundle}"
BAZEL="${BAZEL:-bazel}"
XZ_LEVEL="${XZ_LEVEL:-9}"
log() { echo "== $*" >&2; }
die() { echo "gpu_bundle.sh: $*" >&2; exit 1; }
for tool in patchelf strip readelf ldd xz tar cc; do
  command -v "$tool" >/dev/null || die "$tool is needed (patchelf: scripts/install_deps.sh bench)"
done
mkdir -p "$OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
cd "$ROOT"

# The targets: the labels of gpu_bench.sh's own `"$BAZEL" build` command (it
# continues over lines ending in a backslash), so the two cannot drift apart.
mapfile -t TARGETS < <(awk '
  /"\$BAZEL" build/ { on = 1 }
  on { print; if ($0 !~ /\\$/) exit }' bench/gpu_bench.sh | grep -o '//[A-Za-z0-9_/.-]*:[A-Za-z0-9_.-]*')
[[ ${#TARGETS[@]} -gt 0 ]] || die "found no build command in bench/gpu_bench.sh"
log "building ${TARGETS[*]}"
"$BAZEL" build --color=no --curses=no "${TARGETS[@]}"
BIN="$("$BAZEL" info bazel-bin 2>/dev/null)"

STAGE="$OUT_DIR/stage"
rm -rf "$STAGE"
mkdir -p "$STAGE/bin" "$STAGE/lib/compat" "$STAGE/bench"

# ---- Binaries. ---------------------------------------------------------------
BINARIES=()
for label in "${TARGETS[@]}"; do
  package="${label#//}"
  package="${package%%:*}"
  name="${label##*:}"
  source="$BIN/$package/$name"
  [[ -x "$source" ]] || die "$source was not built"
  mkdir -p "$STAGE/bin/$package"
  cp -L "$source" "$STAGE/bin/$package/$name"
  chmod u+w "$STAGE/bin/$package/$name"
  strip --strip-unneeded "$STAGE/bin/$package/$name"
  # bin/<package>/<name> -> ../ per path component of <package>, then ../lib.
  up="$(sed 's|[^/][^/]*|..|g' <<<"bin/$package")"
  patchelf --set-rpath "\$ORIGIN/$up/lib" "$STAGE/bin/$package/$name"
  BINARIES+=("$source")
done

# ---- Libraries: the ldd closure of every binary. -----------------------------
# Code of ours that dlopen()s by name opens only NVIDIA's libraries
# (kernel_runtime/cuda_driver.cc: libcuda.so.1; bench/cublas_sgemm.cc:
# libcublas.so.*), which come from the host; kernels arrive as memfds.
is_excluded() {
  case "$1" in
    linux-vdso.so* | ld-linux*.so* | libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | \
      librt.so.* | libresolv.so.* | libutil.so.* | libanl.so.* | libnsl.so.* | \
      libcuda.so* | libnvidia*.so* | libcublas*.so* | libcudart*.so* | libnvrtc*.so*) return 0 ;;
  esac
  return 1
}
declare -A LIBRARIES=()
for binary in "${BINARIES[@]}"; do
  ldd_out="$(ldd "$binary")"
  if grep -q "not found" <<<"$ldd_out"; then
    die "$binary: $(grep "not found" <<<"$ldd_out" | head -3)"
  fi
  while read -r soname path; do
    is_excluded "$soname" || LIBRARIES["$soname"]="$path"
  done < <(awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' <<<"$ldd_out")
done
for soname in "${!LIBRARIES[@]}"; do
  case "$soname" in
    libstdc++.so.* | libgcc_s.so.*) target="$STAGE/lib/compat/$soname" ;;
    *) target="$STAGE/lib/$soname" ;;
  esac
  cp -L "${LIBRARIES[$soname]}" "$target"
  chmod u+w "$target"
  strip --strip-unneeded "$target"
  [[ "$target" == */compat/* ]] || patchelf --set-rpath '$ORIGIN' "$target"
done

# ICU's data (libicudata, ~30 MiB, 7 MiB of the tarball) is reached only
# through libxml2's conversions of non-builtin encodings, which libLLVM uses
# only to merge Windows manifests; the builder never does. Ship a stub in
# its place, as ICU's own stubdata does: ICU then finds no data (an error,
# not a crash, if it ever looked). KEEP_ICU_DATA=1 ships the real one.
if [[ "${KEEP_ICU_DATA:-0}" != 1 ]]; then
  for data in "$STAGE"/lib/libicudata.so.*; do
    [[ -e "$data" ]] || continue
    soname="$(basename "$data")"
    symbol="icudt${soname#libicudata.so.}_dat"
    # The symbol table read whole first: `readelf | grep -q` under pipefail
    # fails with SIGPIPE when grep stops at its match while readelf writes.
    dynsyms="$(readelf -Ws --dyn-syms "$data")"
    grep -qw "$symbol" <<<"$dynsyms" || die "$soname does not define $symbol"
    log "replacing $soname ($(du -h "$data" | cut -f1)) with a stub defining $symbol"
    echo "const unsigned char $symbol[64] __attribute__((aligned(16))) = {0};" |
      cc -x c -shared -fPIC -Wl,-soname,"$soname" -o "$data" -
    strip --strip-unneeded "$data"
    LIBRARIES["$soname"]="(stub)"
  done
fi

# ---- What the host must provide: the newest glibc and libstdc++ versions. ---
# (lib/compat's libstdc++ is left out: readelf -V lists the versions it
# defines beside the ones the others need, and it is only a fallback.)
version_needs() {
  find "$STAGE/bin" "$STAGE/lib" -path "$STAGE/lib/compat" -prune -o -type f -print0 |
    xargs -0 readelf -V --wide 2>/dev/null | grep -o "Name: $1_[0-9.]*" | sed 's/^Name: //' |
    sort -u -V | tail -1
}
GLIBC_NEEDED="$(version_needs GLIBC)"
GLIBCXX_NEEDED="$(version_needs GLIBCXX)"
printf 'GLIBC_NEEDED=%s\nGLIBCXX_NEEDED=%s\n' "$GLIBC_NEEDED" "$GLIBCXX_NEEDED" >"$STAGE/NEEDS"

# ---- The Bazel stand-in, the scripts, the manifest. ---------------------------
cat >"$STAGE/bazel" <<'EOF'
#!/usr/bin/env bash
# Stand-in for Bazel in a gpu_bundle.sh bundle: the binaries are prebuilt.
# `bazel build ...` does nothing; `bazel info bazel-bin` prints bin/ beside it.
here="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
case "${1:-}" in
  build) exit 0 ;;
  info) [[ "${2:-}" == bazel-bin ]] && { echo "$here/bin"; exit 0; } ;;
esac
echo "bazel stand-in ($here): only 'build' and 'info bazel-bin' are provided" >&2
exit 2
EOF
chmod 755 "$STAGE/bazel"
cp bench/gpu_bench.sh bench/gpu_references.py bench/gpu_report.py "$STAGE/bench/"
cp bench/gpu_bundle_run.sh "$STAGE/run_gpu_bench.sh"
chmod 755 "$STAGE"/bench/* "$STAGE/run_gpu_bench.sh"
{
  echo "commit $(git rev-parse HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -1)"
  echo "targets ${TARGETS[*]}"
  cat "$STAGE/NEEDS"
  echo "libraries:"
  for soname in $(printf '%s\n' "${!LIBRARIES[@]}" | sort); do
    echo "  $soname <- ${LIBRARIES[$soname]}"
  done
} >"$STAGE/MANIFEST"

# ---- Pack. -------------------------------------------------------------------
TARBALL="$OUT_DIR/tunefleet_gpu_bundle.tar.xz"
log "packing $(du -sh "$STAGE" | cut -f1) into $TARBALL (xz -$XZ_LEVEL)"
tar -C "$STAGE" --owner=0 --group=0 -cf - . | xz "-$XZ_LEVEL" -T0 -c >"$TARBALL.tmp"
mv "$TARBALL.tmp" "$TARBALL"
log "largest files in the stage:"
find "$STAGE" -type f -printf '%s %P\n' | sort -rn | head -8 |
  awk '{ printf "   %7.1f MiB  %s\n", $1 / 1048576, $2 }' >&2
log "needs $GLIBC_NEEDED, $GLIBCXX_NEEDED (the host's libstdc++ is used when it has it)"
# Only the tarball stays, so OUT_DIR itself can be carried (KEEP_STAGE=1 keeps it).
[[ "${KEEP_STAGE:-0}" == 1 ]] || rm -rf "$STAGE"
echo "$TARBALL $(stat -c %s "$TARBALL") bytes ($(du -h "$TARBALL" | cut -f1))"
