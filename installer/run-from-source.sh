#!/usr/bin/env bash
# Install Reelroom from this checkout and start it. On a desktop it opens the tray app; on a
# machine with no display it runs the server headless. Extra arguments go to `reelroom`
# (for example --data-dir DIR --port 8096 --host 0.0.0.0).
# REELROOM_WEB_DIST=path-or-URL of jellyfin-web's built dist (.tar.xz/.tar.gz/.zip or a folder)
# installs the web app into the data folder first, so http://<this machine>:8096/ opens it.
set -euo pipefail
cd "$(dirname "$0")/.."

SYSTEM_PACKAGES=(python3-venv libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxkbcommon-x11-0 libxkbcommon0
  libegl1 libgl1 libfontconfig1 libdbus-1-3 libglib2.0-0)
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  missing=()
  for p in "${SYSTEM_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ "${#missing[@]}" -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[desktop]'
if [ -n "${REELROOM_WEB_DIST:-}" ]; then
  .venv/bin/reelroom --install-web "$REELROOM_WEB_DIST" "$@"
fi
exec .venv/bin/reelroom "$@"
