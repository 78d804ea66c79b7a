#!/bin/bash
# One device call: configure + build for sm_90 without Qt, the op checks (and
# compute-sanitizer memcheck on them), the end-to-end check on a synthetic
# smollm2-shaped model, then decode benchmarks on synthetic Q4_0 files.
# Usage (on the GPU machine, repo root): tests/engine/cuda/device_run.sh [bench shapes...]
set -o pipefail
OUTDIR=${OUT:-/tmp/out}
mkdir -p "$OUTDIR"
B=/tmp/kbuild
# The GPU image lacks PCRE2 and SentencePiece: carried as Debian packages in .devcarry/debs.
if [ -d .devcarry/debs ]; then
  for f in .devcarry/debs/*.deb; do dpkg -x "$f" /tmp/sys; done
  export PKG_CONFIG_PATH=/tmp/sys/usr/lib/x86_64-linux-gnu/pkgconfig PKG_CONFIG_SYSROOT_DIR=/tmp/sys
  export LD_LIBRARY_PATH=/tmp/sys/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
fi
cmake -S . -B $B -G Ninja -DKESTREL_BUILD_APP=OFF -DKESTREL_BUILD_TESTS=OFF -DKESTREL_CUDA_ARCHS=90 -DCMAKE_PREFIX_PATH=/tmp/sys/usr > $OUTDIR/cmake.txt 2>&1 || { tail -30 $OUTDIR/cmake.txt; exit 1; }
ninja -C $B kestrel-cli kestrel-cuda-check 2>&1 | grep -E "error|FAILED" ; test -x $B/app/cli/kestrel-cli || exit 1
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv
CLI=$B/app/cli/kestrel-cli
[ -n "$NOCHECK" ] || $CLI synth -o /tmp/smol.gguf --shape smollm2-135m --type q4_0
[ -n "$NOCHECK" ] || $CLI synth -o /tmp/smol-q8.gguf --shape smollm2-135m --type q8_0 --layers 6
[ -n "$NOCHECK" ] || $B/engine/backend/cuda/kestrel-cuda-check --model /tmp/smol.gguf --model /tmp/smol-q8.gguf --steps 24 2>&1 | tee $OUTDIR/checks.txt | grep -v "^ok"
if [ -n "$SANITIZE" ]; then
  timeout 300 compute-sanitizer --tool memcheck --leak-check no $B/engine/backend/cuda/kestrel-cuda-check 2>&1 | tail -4
fi
for shape in "$@"; do
  $CLI synth -o /tmp/$shape.gguf --shape $shape --type q4_0 || continue
  KESTREL_CUDA_STATS=1 $CLI bench -m /tmp/$shape.gguf --device cuda -p 1 -n 256 -r 3 2>&1 | tee -a $OUTDIR/bench.txt
  [ -n "$PROFILE" ] && KESTREL_CUDA_PROFILE=1 $CLI bench -m /tmp/$shape.gguf --device cuda -p 1 -n 64 -r 1 2>&1 | tee -a $OUTDIR/bench.txt
  [ -n "$DEPTH" ] && $CLI bench -m /tmp/$shape.gguf --device cuda -p $DEPTH -n 128 -r 1 2>&1 | tee -a $OUTDIR/bench.txt
  rm -f /tmp/$shape.gguf
done
