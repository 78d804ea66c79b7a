#!/bin/bash
# One device call for issue 5 (paged KV, prefix reuse, batching) on the GPU:
# build for sm_90, the CUDA checks (ops, a synthetic smollm2-shaped model end to
# end and the paged-KV reuse/fork/batch checks), then the KV benchmarks on a
# synthetic llama3-8b-shaped Q4_0 file with a 16k context.
# Usage (GPU machine, repo root): [SHAPE=llama3-8b] [TURNS=0,1024,4096,8192] [STREAMS=1,4,16] [RESTORE=4096] \
#   [PREFILL=512] [VARIANT=KESTREL_CUDA_MMA_MIN=0] tests/engine/cuda/kv_run.sh
# VARIANT (one environment assignment, or several joined by commas) reruns the
# streams and prefill benchmarks under it, for a before/after in one call.
source tests/engine/cuda/device_build.sh
SHAPE=${SHAPE:-llama3-8b}
if [ -z "$NOCHECK" ]; then
  $CLI synth -o /tmp/smol.gguf --shape smollm2-135m --type q4_0 > /dev/null
  $CHK --model /tmp/smol.gguf --steps 16 > $OUTDIR/checks.txt 2>&1
  echo "checks rc=$?: $(grep -c '^ok' $OUTDIR/checks.txt) ok; paged KV:"; grep "paged KV" $OUTDIR/checks.txt; grep -v '^ok' $OUTDIR/checks.txt | head -12
fi
t1=$(date +%s)
$CLI synth -o /tmp/$SHAPE.gguf --shape $SHAPE --type q4_0 --context 16384 > /dev/null || exit 1
echo "== $SHAPE (synth $(( $(date +%s) - t1 )) s)"
if [ -n "${STREAMS-1,4,16}" ]; then
  $CLI bench -m /tmp/$SHAPE.gguf --device cuda --streams ${STREAMS:-1,4,16} -n 64 -r 2 --json 2>&1 | tee $OUTDIR/streams.json
fi
if [ -n "${TURNS-0,1024,4096,8192}" ]; then
  $CLI bench -m /tmp/$SHAPE.gguf --device cuda --turns ${TURNS:-0,1024,4096,8192} -r 1 --json 2>&1 | tee $OUTDIR/turns.json
fi
if [ -n "${RESTORE-4096}" ]; then
  $CLI bench -m /tmp/$SHAPE.gguf --device cuda --restore ${RESTORE:-4096} -r 1 --json 2>&1 | tee $OUTDIR/restore.json
fi
if [ -n "$PREFILL" ]; then
  $CLI bench -m /tmp/$SHAPE.gguf --device cuda -p $PREFILL -n 16 -r 2 2>&1 | grep -E "^(prefill|decode)"
fi
if [ -n "$VARIANT" ]; then
  echo "== variant $VARIANT"
  [ -n "${STREAMS-1,4,16}" ] && env ${VARIANT//,/ } $CLI bench -m /tmp/$SHAPE.gguf --device cuda --streams ${STREAMS:-1,4,16} -n 64 -r 2 2>&1 | grep streams
  [ -n "$PREFILL" ] && env ${VARIANT//,/ } $CLI bench -m /tmp/$SHAPE.gguf --device cuda -p $PREFILL -n 16 -r 2 2>&1 | grep -E "^(prefill|decode)"
fi
echo "total: $(( $(date +%s) - t0 )) s"
