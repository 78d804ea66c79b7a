#!/bin/bash
# Checks, in the machine code, that the one-token GEMV kernels (the split ones,
# and the warp-per-row ones of narrow models, all integer formats) request their
# first weights before they wait on the previous kernel (griddepcontrol.wait, ACQBULK
# in SASS). Why: that overlap is what programmatic dependent launch buys the
# GEMVs, and nothing in CUDA C++ pins it. ptxas is free to move the weights'
# read-only loads past the wait, and did so in a loop-restructured variant of
# the kernel (branch exp/gemv-loop-pipe): all of its first loads after ACQBULK,
# -9 % on llama3-8b decode on an H100, while the same kernel was faster when
# timed alone. Run after a build on a machine with cuobjdump (the GPU machine):
#   tests/engine/cuda/pdl_order.sh BUILD_DIR
# Prints, per kernel, the read-only (weight) loads before the first ACQBULK and
# those between it and the first dot product (IDP.4A); exits 1 if a kernel has
# none before the wait or any in between (a first-pass load sunk past the wait).
# A kernel with more than one wait in its SASS is listed as not judged: the scan
# follows the layout, not the paths (branch exp/norm-in-gemv had such kernels).
B=${1:-/tmp/kbuild}
objs=$(ls "$B"/kernels/cuda/CMakeFiles/*/gemv.cu.o "$B"/kernels/cuda/CMakeFiles/*/gemv_rope.cu.o 2>/dev/null)
[ -n "$objs" ] || { echo "pdl_order: no gemv objects under $B"; exit 2; }
command -v cuobjdump > /dev/null || { echo "pdl_order: no cuobjdump"; exit 2; }
for o in $objs; do cuobjdump --dump-sass "$o"; done | awk '
  /Function : / { name = $3; inCheck = name ~ /gemv(Split|Glu|QkvRope)?Kernel/ && name !~ /DevFormatE3/  # E3: F16
                  if (inCheck) { before[name] = 0; sunk[name] = 0; state[name] = 0; waits[name] = 0; seen[name] = 1 } next }
  !inCheck { next }
  /ACQBULK/ { waits[name]++; if (state[name] == 0) state[name] = 1; next }
  /IDP\.4A/ { if (state[name] == 1) state[name] = 2; next }
  /LDG[^ ]*CONSTANT/ { if (state[name] == 0) before[name]++; else if (state[name] == 1) sunk[name]++ }
  END {
    bad = 0
    for (n in seen) {
      short = n; sub(/^_ZN7kestrel4cuda[0-9A-Za-z_]*[0-9](gemv)/, "gemv", short)
      if (waits[n] > 1) {  # the listing is in layout order, not execution order: no verdict
        printf "%d waits: not judged          %s\n", waits[n], substr(short, 1, 100)
        continue
      }
      printf "%3d before the wait, %3d after it  %s\n", before[n], sunk[n], substr(short, 1, 100)
      if (state[n] > 0 && (before[n] == 0 || sunk[n] > 0)) bad = 1
    }
    if (bad) print "pdl_order: a GEMV kernel requests first-pass weights after the wait"
    else print "pdl_order: every GEMV kernel requests its first weights before the wait"
    exit bad
  }'
