#!/usr/bin/env bash
# Install everything the test suite needs and run it. Works on a fresh Debian machine with
# Python 3.11: system packages come from apt when run as root, Python packages go into .venv.
set -euo pipefail
cd "$(dirname "$0")/.."

SYSTEM_PACKAGES=(python3-venv ffmpeg xvfb xauth trayer libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0
  libxkbcommon-x11-0 libxkbcommon0 libegl1 libgl1 libfontconfig1 libdbus-1-3 libglib2.0-0 iproute2 util-linux
  nginx-light postgresql chromium)
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  missing=()
  for p in "${SYSTEM_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "Installing system packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test,postgres]'
[ "${1:-}" = "--setup-only" ] && exit 0   # .ci/run: install, build the installer, then test

export QT_QPA_PLATFORM=offscreen
exec .venv/bin/python -m pytest -p no:cacheprovider "$@"
