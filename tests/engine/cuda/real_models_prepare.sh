#!/bin/bash
# Prepares the real test models for a GPU-machine check (tests/engine/cuda/real_models_run.sh).
# Why: a device call carries at most 64 MB and the models are 98 MB (SmolLM2) and 253 MB
# (Gemma 3), so they travel in ~50 MB parts, one per call, each copied into the machine's
# /tmp while it stays warm; the NumPy reference data (3.6 MB) travels with the last call.
# Usage (repo root, after scripts/setup.sh test has fetched the models and written the reference):
#   tests/engine/cuda/real_models_prepare.sh [BUILD_DIR]
# then, as device calls in quick succession (the machine is released after ~30 s idle):
#   carry [".devmodel/s.00"] command "mkdir -p /tmp/parts && cp .devmodel/* /tmp/parts/"
#   ... the same for s.01, g.00 ... g.03 ...
#   carry [".devmodel/g.04", ".devcarry", ".devref"] command "tests/engine/cuda/real_models_run.sh"
set -e
B=${1:-build}
M=${KESTREL_MODELS_DIR:-$HOME/.local/share/kestrel/models}
for d in /.devmodel/ /.devref/; do grep -qxF "$d" .git/info/exclude || echo "$d" >> .git/info/exclude; done
rm -rf .devmodel .devref && mkdir -p .devmodel .devref
split -b 49181216 -d "$M/SmolLM2-135M-Instruct.Q4_1.gguf" .devmodel/s.
split -b 50622605 -d "$M/gemma-3-270m-q4_k_m.gguf" .devmodel/g.
cp "$B"/testdata/model_ref_smollm2.txt "$B"/testdata/model_ref_smollm2_logits*.f32 \
   "$B"/testdata/model_ref_gemma3.txt "$B"/testdata/model_ref_gemma3_logits*.f32 .devref/
(cd "$M" && sha256sum SmolLM2-135M-Instruct.Q4_1.gguf gemma-3-270m-q4_k_m.gguf) > .devref/sha256.txt
ls .devmodel
