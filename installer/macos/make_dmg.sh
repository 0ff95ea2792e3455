#!/usr/bin/env bash
# Build Reelroom.app (PyInstaller BUNDLE, Info.plist with LSUIElement) and a .dmg with an
# Applications link. Run on macOS:   bash installer/macos/make_dmg.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
"$PYTHON" -m pip install -q -e '.[installer]'
"$PYTHON" -m PyInstaller --noconfirm --distpath dist --workpath build/pyinstaller installer/reelroom.spec
VERSION=$("$PYTHON" -c 'import sys; sys.path.insert(0, "installer"); import inputs; print(inputs.version())')
STAGE=build/dmg
rm -rf "$STAGE" && mkdir -p "$STAGE"
cp -R dist/Reelroom.app "$STAGE/"
ln -s /Applications "$STAGE/Applications"
hdiutil create -volname "Reelroom $VERSION" -srcfolder "$STAGE" -ov -format UDZO "dist/Reelroom-$VERSION.dmg"
echo "dist/Reelroom-$VERSION.dmg"
