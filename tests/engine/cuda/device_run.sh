#!/bin/bash
# One device call: configure + build for sm_90 without Qt, the op checks (and
# compute-sanitizer memcheck on them), the end-to-end check on a synthetic
# smollm2-shaped model, then decode benchmarks on synthetic Q4_0 files.
# Usage (on the GPU machine, repo root): tests/engine/cuda/device_run.sh [bench shapes...]
source tests/engine/cuda/device_build.sh
[ -n "$NOCHECK" ] || $CLI synth -o /tmp/smol.gguf --shape smollm2-135m --type q4_0
[ -n "$NOCHECK" ] || $CLI synth -o /tmp/smol-q8.gguf --shape smollm2-135m --type q8_0 --layers 6
[ -n "$NOCHECK" ] || $B/engine/backend/cuda/kestrel-cuda-check --model /tmp/smol.gguf --model /tmp/smol-q8.gguf --steps 24 2>&1 | tee $OUTDIR/checks.txt | grep -v "^ok"
# The opt-in persistent decode step (kernels/cuda/decode_step.cu) through the same end-to-end checks, longer.
[ -n "$NOCHECK" ] || KESTREL_CUDA_MEGA=1 $B/engine/backend/cuda/kestrel-cuda-check --no-ops --model /tmp/smol.gguf --model /tmp/smol-q8.gguf --steps 100 2>&1 | tee $OUTDIR/checks_mega.txt | grep -v "^ok"
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
