#!/bin/bash
# One device call for the weight formats: build for sm_90, the CUDA checks with
# small synthetic models of each TYPES format (end to end against the CPU), then
# decode benchmarks of the llama3-8b shape in each of BENCH_TYPES.
# Usage (GPU machine, repo root): [TYPES="q4_0 q4_k q6_k q5_k"] [BENCH_TYPES="q4_0 q4_k"] tests/engine/cuda/quant_run.sh
source tests/engine/cuda/device_build.sh
models=()
for t in ${TYPES:-q4_0 q4_k q6_k q5_k}; do
  # 512 wide with 64-dim heads: K-quant rows must be whole 256-value super blocks.
  $CLI synth -o /tmp/small-$t.gguf --shape smollm2-135m --embd 512 --ff 1536 --heads 8 --kv-heads 4 --layers 6 \
    --type $t > /dev/null && models+=(--model /tmp/small-$t.gguf)
done
$CHK "${models[@]}" --steps 16 > $OUTDIR/checks.txt 2>&1
echo "checks rc=$?: $(grep -c '^ok' $OUTDIR/checks.txt) ok; not ok:"; grep -v '^ok' $OUTDIR/checks.txt | head -20
for t in ${BENCH_TYPES:-q4_0 q4_k}; do
  $CLI synth -o /tmp/bench-$t.gguf --shape llama3-8b --type $t > /dev/null || continue
  echo "== llama3-8b $t: $($CLI bench -m /tmp/bench-$t.gguf --device cuda -p 1 -n 128 -r 2 2>&1 | grep -E '^(decode|weights)' | tr -s ' ' | tr '\n' ' ')"
  rm -f /tmp/bench-$t.gguf
done
echo "total: $(( $(date +%s) - t0 )) s"
