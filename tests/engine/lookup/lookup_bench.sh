#!/bin/bash
# Speculative decoding by lookup (GenerateParams::lookupDraft), measured on chat prompts:
# each user message of prompts.txt, in ChatML (SmolLM2's template), generated greedily and at
# temperature 0.7 (top-k 40, seeded) with --lookup 0 and --lookup N; prints every run's tok/s and
# steps, the totals (reply tokens over decode time), and whether each pair of replies is
# identical (it must be on the CPU; on CUDA a step of several rows rounds apart from a
# one-token step, so a near-tie may go the other way).
# Usage: tests/engine/lookup/lookup_bench.sh CLI MODEL [DEVICE=cpu] [N=6] [REPS=1] [MAXTOKENS=300]
set -u
CLI=$1 MODEL=$2 DEVICE=${3:-cpu} N=${4:-6} REPS=${5:-1} MAXT=${6:-300}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# Split the prompts file (comment lines dropped) at lines of ----.
awk -v d="$TMP" 'BEGIN{n=0} /^#/{next} /^----$/{n++; next} {print > (d "/p" n ".txt")}' "$HERE/prompts.txt"
SYS="You are a helpful AI assistant named SmolLM, trained by Hugging Face"
for temp in 0 0.7; do
  declare -A tok=() ms=() steps=()
  same=0 pairs=0
  for rep in $(seq 1 "$REPS"); do
    for p in "$TMP"/p*.txt; do
      prompt=$(printf '<|im_start|>system\n%s<|im_end|>\n<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\n' "$SYS" "$(cat "$p")")
      for lk in 0 "$N"; do
        "$CLI" generate -m "$MODEL" --device "$DEVICE" -p "$prompt" -n "$MAXT" --temp "$temp" --top-k 40 --seed $((6 + rep)) \
          --tokens --lookup "$lk" > "$TMP/out$lk" 2> "$TMP/err$lk" || { cat "$TMP/err$lk"; exit 1; }
        read -r n rate < <(sed -n 's/.*reply: \([0-9]*\) tokens, \([0-9.]*\) tok\/s.*/\1 \2/p' "$TMP/err$lk")
        st=$(sed -n 's/^lookup: \([0-9]*\) decode steps.*/\1/p' "$TMP/err$lk")
        echo "temp $temp $(basename "$p" .txt) lookup $lk: $n tokens, $rate tok/s${st:+, $st steps}"
        tok[$lk]=$(( ${tok[$lk]:-0} + n - 1 ))
        ms[$lk]=$(awk -v a="${ms[$lk]:-0}" -v n="$n" -v r="$rate" 'BEGIN{printf "%.3f", a + (r > 0 ? (n - 1) * 1000 / r : 0)}')
        steps[$lk]=$(( ${steps[$lk]:-0} + ${st:-0} ))
      done
      pairs=$((pairs + 1))
      cmp -s "$TMP/out0" "$TMP/out$N" && same=$((same + 1))
    done
  done
  for lk in 0 "$N"; do
    awk -v t="$temp" -v l="$lk" -v n="${tok[$lk]}" -v m="${ms[$lk]}" -v s="${steps[$lk]}" \
      'BEGIN{printf "TOTAL temp %s lookup %s: %d tokens, %.1f tok/s%s\n", t, l, n, n * 1000 / m, (l > 0 ? sprintf(", %d decode steps", s) : "")}'
  done
  echo "IDENTICAL temp $temp: $same of $pairs replies"
  unset tok ms steps
done
