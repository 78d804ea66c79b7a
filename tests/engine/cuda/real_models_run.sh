#!/bin/bash
# On the GPU machine, after the parts of real_models_prepare.sh have arrived in /tmp/parts:
# joins and verifies the models, builds, checks both against the NumPy reference
# (kestrel-cuda-check --reference, tests/common/reference_check.h) and times their decode.
mkdir -p /tmp/parts && cp .devmodel/* /tmp/parts/ 2>/dev/null
cat /tmp/parts/s.0* > /tmp/SmolLM2-135M-Instruct.Q4_1.gguf
cat /tmp/parts/g.0* > /tmp/gemma-3-270m-q4_k_m.gguf
(cd /tmp && sha256sum -c "$OLDPWD/.devref/sha256.txt") || { echo "real_models_run: a model part is missing or damaged"; exit 1; }
source tests/engine/cuda/device_build.sh
$CHK --no-ops --reference /tmp/SmolLM2-135M-Instruct.Q4_1.gguf=.devref/model_ref_smollm2 \
     --reference /tmp/gemma-3-270m-q4_k_m.gguf=.devref/model_ref_gemma3 2>&1 | tee $OUTDIR/reference.txt
for m in SmolLM2-135M-Instruct.Q4_1 gemma-3-270m-q4_k_m; do
  $CLI bench -m /tmp/$m.gguf --device cuda -p 512 -n 256 -r 3 2>&1 | grep -E "^(model|prefill|decode|weights)"
done
echo "total: $(( $(date +%s) - t0 )) s"
