# Sourced by the device scripts (device_run.sh, perf_run.sh, kv_run.sh): unpacks
# the carried Debian packages the GPU image lacks (PCRE2, SentencePiece, xxHash
# headers, in .devcarry/debs), configures and builds kestrel-cli and
# kestrel-cuda-check for sm_90 without Qt into $B, and names the GPU.
# Sets OUTDIR, B, CLI, CHK and t0 (the start, for the scripts' total time).
# B (the build folder) and CMAKE_EXTRA (more -D options, such as
# -DKESTREL_CUDA_STEP_TRACE=ON) may be set by the caller.
set -o pipefail
OUTDIR=${OUT:-/tmp/out}
mkdir -p "$OUTDIR"
B=${B:-/tmp/kbuild}
if [ -d .devcarry/debs ]; then
  for f in .devcarry/debs/*.deb; do dpkg -x "$f" /tmp/sys; done
  export PKG_CONFIG_PATH=/tmp/sys/usr/lib/x86_64-linux-gnu/pkgconfig PKG_CONFIG_SYSROOT_DIR=/tmp/sys
  export LD_LIBRARY_PATH=/tmp/sys/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
fi
t0=$(date +%s)
cmake -S . -B $B -G Ninja -DKESTREL_BUILD_APP=OFF -DKESTREL_BUILD_TESTS=OFF -DKESTREL_CUDA_ARCHS=90 -DCMAKE_PREFIX_PATH=/tmp/sys/usr $CMAKE_EXTRA > $OUTDIR/cmake.txt 2>&1 || { tail -30 $OUTDIR/cmake.txt; exit 1; }
ninja -C $B kestrel-cli kestrel-cuda-check > $OUTDIR/build.txt 2>&1 || { grep -E "error" -A3 $OUTDIR/build.txt | head -40; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem,driver_version --format=csv,noheader
CLI=$B/app/cli/kestrel-cli
CHK=$B/engine/backend/cuda/kestrel-cuda-check
