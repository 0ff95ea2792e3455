#!/usr/bin/env bash
# Build Reelroom.app and a .dmg on macOS (run from anywhere; needs the `installer` extra).
#   installer/macos/make_dmg.sh
# Output: dist/Reelroom.app (LSUIElement menu-bar app; Info.plist generated from pyproject's version by
# installer/build_inputs.py) and dist/reelroom-<version>-macos-<arch>.dmg with an /Applications link.
# Data goes to ~/Library/Application Support/Reelroom (platformdirs), never inside the .app.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-python3}
VERSION=$("$PYTHON" -c 'import sys; sys.path.insert(0, "installer"); from build_inputs import app_version; print(app_version())')
"$PYTHON" installer/build_inputs.py >/dev/null
"$PYTHON" installer/make_icons.py >/dev/null
"$PYTHON" -m PyInstaller --noconfirm --log-level WARN --distpath dist --workpath build/pyinstaller installer/reelroom.spec
APP=dist/Reelroom.app
test -d "$APP"
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
cp -R "$APP" "$STAGE/"
ln -s /Applications "$STAGE/Applications"
DMG="dist/reelroom-$VERSION-macos-$(uname -m).dmg"
rm -f "$DMG"
hdiutil create -volname "Reelroom $VERSION" -srcfolder "$STAGE" -fs HFS+ -format UDZO -ov "$DMG"
echo "$DMG"
