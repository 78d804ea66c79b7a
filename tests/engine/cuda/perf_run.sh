#!/bin/bash
# One device call for decode-speed work: build for sm_90, the op checks, then
# decode benchmarks of synthetic Q4_0 files, each under every variant.
# Usage (GPU machine, repo root):
#   SHAPES="llama3-8b smollm2-135m" [VARIANTS="KESTREL_CUDA_STREAM=0 KESTREL_CUDA_STREAM=1"] \
#   [PROFILE=1] [TRACE=1] [DEPTH=4096] [STREAMS=1,4,16] [NOCHECK=1] [MEMCHECK=1] tests/engine/cuda/perf_run.sh
# A variant is one environment assignment (or several joined by commas); the
# default compares programmatic dependent launch off and on. The op checks run
# under every distinct variant too. TRACE=1 also builds with the in-graph kernel timeline
# (kernels/cuda/step_trace.h) into /tmp/ktrace and prints each shape's trace under
# the last variant (the trace build decodes 2-3 % slower: its tok/s are not compared).
# MEMCHECK=1 also runs the op checks and two steps of the wide file under
# compute-sanitizer's memcheck, under the last variant. STREAMS=1,4,16 also measures
# that many streams decoding together under every variant (issue 5's aggregate
# throughput; with TRACE=1 the trace of the largest count too).
if [ -n "$TRACE" ]; then
  B=/tmp/ktrace CMAKE_EXTRA=-DKESTREL_CUDA_STEP_TRACE=ON source tests/engine/cuda/device_build.sh
  TCLI=$CLI
  unset B CMAKE_EXTRA
fi
source tests/engine/cuda/device_build.sh
tests/engine/cuda/pdl_order.sh $B | tail -1  # weights requested before the wait (pdl_order.sh says why)
VARIANTS=${VARIANTS:-"KESTREL_CUDA_PDL=0 KESTREL_CUDA_PDL=1"}
runv() { local v=$1; shift; env ${v//,/ } "$@"; }
if [ -z "$NOCHECK" ]; then
  $CLI synth -o /tmp/smol.gguf --shape smollm2-135m --type q4_0 > /dev/null
  $CLI synth -o /tmp/smol-q8.gguf --shape smollm2-135m --type q8_0 --layers 6 > /dev/null
  # 4096-wide rows: the split GEMVs (gemv_split.cuh) that smollm2's 576 never reaches.
  $CLI synth -o /tmp/wide.gguf --shape llama3-8b --layers 3 --vocab 8000 --type q4_0 > /dev/null
  for v in $(echo $VARIANTS | tr ' ' '\n' | awk '!seen[$0]++'); do  # each distinct variant once
    f=$OUTDIR/checks-${v//[^A-Za-z0-9_.-]/_}.txt  # names the device tool can bring back
    runv $v $CHK --model /tmp/smol.gguf --model /tmp/smol-q8.gguf --model /tmp/wide.gguf --steps 24 > $f 2>&1
    echo "checks $v rc=$?: $(grep -c '^ok' $f) ok; not ok:"; grep -v '^ok' $f | head -12
  done
  # The whole-context attention wherever it applies (wholePays leaves head size 128 to
  # steps of many tokens, which the checks' steps are not): its kernels stay checked.
  f=$OUTDIR/checks-whole-force.txt
  KESTREL_CUDA_ATTN_WHOLE_FORCE=1 $CHK --model /tmp/smol.gguf --model /tmp/wide.gguf --steps 24 > $f 2>&1
  echo "checks KESTREL_CUDA_ATTN_WHOLE_FORCE=1 rc=$?: $(grep -c '^ok' $f) ok; not ok:"; grep -v '^ok' $f | head -12
  if [ -n "$MEMCHECK" ]; then
    v=${VARIANTS##* }
    runv $v timeout 300 compute-sanitizer --tool memcheck --leak-check no $CHK --model /tmp/wide.gguf --steps 2 \
      > $OUTDIR/memcheck.txt 2>&1
    echo "memcheck ($v) rc=$?: $(grep -E 'ERROR SUMMARY|checks, ' $OUTDIR/memcheck.txt | tr '\n' ' ')"
  fi
  rm -f /tmp/smol-q8.gguf /tmp/wide.gguf
fi
for shape in $SHAPES; do
  t1=$(date +%s)
  $CLI synth -o /tmp/$shape.gguf --shape $shape --type q4_0 > /dev/null || continue
  echo "== $shape (synth $(( $(date +%s) - t1 )) s)"
  for v in $VARIANTS; do
    runv $v KESTREL_CUDA_STATS=1 $CLI bench -m /tmp/$shape.gguf --device cuda -p 1 -n 256 -r 3 > $OUTDIR/b.txt 2>&1
    cat $OUTDIR/b.txt >> $OUTDIR/bench.txt
    echo "$v depth0: $(grep -E '^(decode|weights)' $OUTDIR/b.txt | tr -s ' ' | tr '\n' ' ') $(grep -iE 'error|replay' $OUTDIR/b.txt | head -2 | tr '\n' ' ')"
  done
  if [ -n "$TRACE" ]; then
    v=${VARIANTS##* }
    runv $v $TCLI bench -m /tmp/$shape.gguf --device cuda -p 1 -n 256 -r 2 > $OUTDIR/t-$shape.txt 2>&1
    echo "step trace ($v):"; grep -A24 "cuda step trace" $OUTDIR/t-$shape.txt | grep -vE "^(model|prefill|decode|weights):"
  fi
  if [ -n "$STREAMS" ]; then
    for v in $VARIANTS; do
      runv $v $CLI bench -m /tmp/$shape.gguf --device cuda --streams $STREAMS -n 64 -r 2 > $OUTDIR/b.txt 2>&1
      cat $OUTDIR/b.txt >> $OUTDIR/bench.txt
      echo "$v streams: $(grep -iE 'stream' $OUTDIR/b.txt | tr -s ' ' | tr '\n' ' ')"
    done
    if [ -n "$TRACE" ]; then
      v=${VARIANTS##* }
      runv $v $TCLI bench -m /tmp/$shape.gguf --device cuda --streams ${STREAMS##*,} -n 64 -r 1 > $OUTDIR/ts-$shape.txt 2>&1
      echo "step trace, ${STREAMS##*,} streams ($v):"; grep -A24 "cuda step trace" $OUTDIR/ts-$shape.txt | grep -vE "^(model|prefill|decode|weights):"
    fi
  fi
  if [ -n "$PROFILE" ]; then
    v=${VARIANTS##* }
    runv $v KESTREL_CUDA_PROFILE=1 $CLI bench -m /tmp/$shape.gguf --device cuda -p 1 -n 64 -r 1 > $OUTDIR/p-$shape.txt 2>&1
    echo "profile ($v):"; grep -A14 "cuda profile" $OUTDIR/p-$shape.txt
  fi
  if [ -n "$DEPTH" ]; then
    for v in $VARIANTS; do
      runv $v $CLI bench -m /tmp/$shape.gguf --device cuda -p $DEPTH -n 128 -r 1 > $OUTDIR/b.txt 2>&1
      cat $OUTDIR/b.txt >> $OUTDIR/bench.txt
      echo "$v depth$DEPTH: $(grep -E '^(prefill|decode)' $OUTDIR/b.txt | tr -s ' ' | tr '\n' ' ')"
    done
  fi
  rm -f /tmp/$shape.gguf
done
echo "total: $(( $(date +%s) - t0 )) s"
