#!/bin/bash
# One device call for decode-speed work: build for sm_90, the op checks with
# programmatic dependent launch off and on (KESTREL_CUDA_PDL), then decode
# benchmarks of synthetic Q4_0 files with PDL off and on.
# Usage (GPU machine, repo root): SHAPES="llama3-8b smollm2-135m" [PROFILE=1] [DEPTH=4096] \
#   tests/engine/cuda/perf_run.sh
source tests/engine/cuda/device_build.sh
if [ -z "$NOCHECK" ]; then
  $CLI synth -o /tmp/smol.gguf --shape smollm2-135m --type q4_0 > /dev/null
  $CLI synth -o /tmp/smol-q8.gguf --shape smollm2-135m --type q8_0 --layers 6 > /dev/null
  for pdl in 0 1; do
    KESTREL_CUDA_PDL=$pdl $CHK --model /tmp/smol.gguf --model /tmp/smol-q8.gguf --steps 24 > $OUTDIR/checks-pdl$pdl.txt 2>&1
    echo "checks pdl=$pdl rc=$?: $(grep -c '^ok' $OUTDIR/checks-pdl$pdl.txt) ok; not ok:"; grep -v '^ok' $OUTDIR/checks-pdl$pdl.txt | head -12
  done
  rm -f /tmp/smol-q8.gguf
fi
for shape in $SHAPES; do
  t1=$(date +%s)
  $CLI synth -o /tmp/$shape.gguf --shape $shape --type q4_0 > /dev/null || continue
  echo "== $shape (synth $(( $(date +%s) - t1 )) s)"
  for pdl in 0 1; do
    KESTREL_CUDA_PDL=$pdl KESTREL_CUDA_STATS=1 $CLI bench -m /tmp/$shape.gguf --device cuda -p 1 -n 256 -r 3 > $OUTDIR/b.txt 2>&1
    cat $OUTDIR/b.txt >> $OUTDIR/bench.txt
    echo "pdl=$pdl depth0: $(grep -E '^(decode|weights)' $OUTDIR/b.txt | tr -s ' ' | tr '\n' ' ') $(grep -iE 'error|replay' $OUTDIR/b.txt | head -2 | tr '\n' ' ')"
  done
  if [ -n "$PROFILE" ]; then
    KESTREL_CUDA_PROFILE=1 $CLI bench -m /tmp/$shape.gguf --device cuda -p 1 -n 64 -r 1 > $OUTDIR/p-$shape.txt 2>&1
    grep -A14 "cuda profile" $OUTDIR/p-$shape.txt
  fi
  if [ -n "$DEPTH" ]; then
    for pdl in 0 1; do
      KESTREL_CUDA_PDL=$pdl $CLI bench -m /tmp/$shape.gguf --device cuda -p $DEPTH -n 128 -r 1 > $OUTDIR/b.txt 2>&1
      cat $OUTDIR/b.txt >> $OUTDIR/bench.txt
      echo "pdl=$pdl depth$DEPTH: $(grep -E '^(prefill|decode)' $OUTDIR/b.txt | tr -s ' ' | tr '\n' ' ')"
    done
  fi
  rm -f /tmp/$shape.gguf
done
echo "total: $(( $(date +%s) - t0 )) s"
