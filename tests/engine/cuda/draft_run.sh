#!/bin/bash
# One device call for speculative decoding with a draft model on the GPU: what
# a step costs, from synthetic files (random weights agree on nothing, so the
# drafts are forced to full length with KESTREL_DRAFT_MIN_P=0):
#   self     the 8B shape drafting for itself: every guess is the model's own
#            greedy token, so the step count falls by the draft length while the
#            drafting costs a model step per guess (an upper bound on agreement);
#   small    a smollm2-135m shape with the same vocabulary drafting: nothing is
#            kept, so the time says what a small draft's guesses and a verify
#            step of that many rows cost over plain decoding.
# Usage (GPU machine, repo root): tests/engine/cuda/draft_run.sh
source tests/engine/cuda/device_build.sh
$CLI synth -o /tmp/t.gguf --shape llama3-8b --type q4_0 > /dev/null
$CLI synth -o /tmp/d.gguf --shape smollm2-135m --vocab 128256 --type q4_0 > /dev/null
P="The history of the city begins with a small settlement on the river, where traders met"
gen() { "$@" 2>&1 >/dev/null | grep -E "^(reply|prompt|draft|kestrel)" | sed -E 's/prompt: [^;]*; //' | tr '\n' ' '; echo; }
for rep in 1 2; do
  echo "plain: $(gen $CLI generate -m /tmp/t.gguf --device cuda -p "$P" -n 128 --temp 0 --ignore-eos)"
  for n in 2 4 6; do
    echo "self n=$n: $(KESTREL_DRAFT_MIN_P=0 gen $CLI generate -m /tmp/t.gguf --device cuda -p "$P" -n 128 --temp 0 --ignore-eos --draft /tmp/t.gguf --draft-n $n)"
    echo "small n=$n: $(KESTREL_DRAFT_MIN_P=0 gen $CLI generate -m /tmp/t.gguf --device cuda -p "$P" -n 128 --temp 0 --ignore-eos --draft /tmp/d.gguf --draft-n $n)"
  done
  echo "small, confidence stop: $(gen $CLI generate -m /tmp/t.gguf --device cuda -p "$P" -n 128 --temp 0 --ignore-eos --draft /tmp/d.gguf)"
done
# Do the self-drafted tokens equal plain decoding's (a several-row GPU step rounds apart)?
$CLI generate -m /tmp/t.gguf --device cuda -p "$P" -n 128 --temp 0 --ignore-eos --tokens 2>/dev/null > $OUTDIR/plain.txt
KESTREL_DRAFT_MIN_P=0 $CLI generate -m /tmp/t.gguf --device cuda -p "$P" -n 128 --temp 0 --ignore-eos --tokens --draft /tmp/t.gguf --draft-n 4 2>/dev/null > $OUTDIR/self.txt
python3 -c "
a=open('$OUTDIR/plain.txt').read().split(); b=open('$OUTDIR/self.txt').read().split()
n=next((i for i,(x,y) in enumerate(zip(a,b)) if x!=y), min(len(a),len(b)))
print(f'self-draft tokens equal to plain for the first {n} of {len(a)}')"
echo "total: $(( $(date +%s) - t0 )) s"
