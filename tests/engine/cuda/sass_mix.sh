#!/bin/bash
# Instruction mix of CUDA kernels, on a machine without a GPU: compiles one
# kernels/cuda/*.cu for sm_90, disassembles it and prints, for each kernel whose
# mangled name contains PATTERN, its instruction count and the opcodes between its
# first and last ANCHOR instruction (default IMMA, the int8 mma), per ANCHOR.
# Why: device time is scarce; whether a loop is issue-bound or waits can be judged
# from its instructions per mma against a measured kernel time (docs/PERFORMANCE.md,
# twentieth session). cuobjdump (and the nvdisasm it runs) come from the CUDA
# toolkit, else from PyPI's nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm (cached
# under ~/.cache/kestrel).
# Usage (repo root): tests/engine/cuda/sass_mix.sh kernels/cuda/gemm_tiled.cu 'DevFormatE0ELi1ELi8ELi2ELb1ELb0E' [IMMA]
set -euo pipefail
src=${1:?usage: sass_mix.sh FILE.cu PATTERN [ANCHOR]}
pattern=${2:?usage: sass_mix.sh FILE.cu PATTERN [ANCHOR]}
anchor=${3:-IMMA}
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
objdump=$(command -v cuobjdump || true)
[ -z "$objdump" ] && [ -x "$(dirname "$nvcc")/cuobjdump" ] && objdump=$(dirname "$nvcc")/cuobjdump
if [ -z "$objdump" ]; then
  cache=~/.cache/kestrel/cuobjdump
  if [ ! -x $cache/nvidia/cu13/bin/nvdisasm ]; then
    mkdir -p $cache
    python3 -m pip download -q --no-deps nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm -d $cache
    for w in $cache/*.whl; do python3 -m zipfile -e "$w" $cache; done
    chmod +x $cache/nvidia/cu13/bin/*
  fi
  objdump=$cache/nvidia/cu13/bin/cuobjdump
  export PATH=$cache/nvidia/cu13/bin:$PATH  # cuobjdump runs nvdisasm
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$nvcc" -std=c++20 -arch=sm_90 -O3 -I kernels/cuda -I engine -I . -cubin "$src" -o "$tmp/k.cubin"
"$objdump" -sass "$tmp/k.cubin" > "$tmp/k.sass"
python3 - "$tmp/k.sass" "$pattern" "$anchor" <<'EOF'
import collections, re, sys
path, pattern, anchor = sys.argv[1:4]
for func in re.split(r'\n\s*Function : ', open(path).read())[1:]:
    name = func.split('\n', 1)[0].strip()
    if pattern not in name:
        continue
    ops = [m.group(2) for m in (re.match(r'\s*/\*[0-9a-f]{4,}\*/\s*(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)', l)
                                for l in func.split('\n')) if m]
    at = [i for i, op in enumerate(ops) if op == anchor]
    print(f'{name}\n  {len(ops)} instructions, {len(at)} {anchor}')
    if not at:
        continue
    span = ops[at[0]:at[-1] + 1]
    print(f'  first to last {anchor}: {len(span)} instructions, {len(span) / len(at):.1f} per {anchor}')
    for op, n in collections.Counter(span).most_common(12):
        print(f'    {op:8s} {n:5d}  {n / len(at):5.2f} per {anchor}')
EOF
