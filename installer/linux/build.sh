#!/usr/bin/env bash
# Build the Linux one-folder bundle (PyInstaller), a tar.gz of it, and a .deb (dpkg-deb) that
# installs to /opt/reelroom with /usr/bin links, a .desktop entry, icons and a systemd user unit
# for the headless server.
#
#   bash installer/linux/build.sh            # uses .venv (made and filled if missing)
#   PYTHON=/path/to/python bash installer/linux/build.sh
#
# REELROOM_WEB_DIST=path/to/jellyfin-web-10.10.7-dist.tar.xz (or a dist folder) bundles the web app,
# served at /web/ (see README, "The web app").
# DEB_XZ_LEVEL=6 gives a smaller .deb at several times the compression time (default 2: CI-friendly).
# Output: dist/reelroom/ (the bundle), dist/reelroom-<version>-linux-<arch>.tar.gz,
#         dist/reelroom_<version>_<debarch>.deb
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)

if [ -z "${PYTHON:-}" ]; then
  [ -x .venv/bin/python ] || python3 -m venv .venv
  PYTHON=.venv/bin/python
  "$PYTHON" -m pip install -q -e '.[installer]'
fi

start=$(date +%s)
"$PYTHON" -m PyInstaller --noconfirm --log-level WARN --distpath dist --workpath build/pyinstaller \
  installer/reelroom.spec
VERSION=$("$PYTHON" -c 'import sys; sys.path.insert(0, "installer"); import inputs; print(inputs.version())')
ARCH=$(uname -m)
DEBARCH=$(dpkg --print-architecture 2>/dev/null || echo amd64)
BUNDLE=dist/reelroom

tar -C dist -czf "dist/reelroom-${VERSION}-linux-${ARCH}.tar.gz" reelroom

# The .deb tree.
PKG=build/deb/reelroom
rm -rf "$PKG"
mkdir -p "$PKG/DEBIAN" "$PKG/opt" "$PKG/usr/bin" "$PKG/usr/share/applications" "$PKG/usr/lib/systemd/user"
cp -a "$BUNDLE" "$PKG/opt/reelroom"
ln -s /opt/reelroom/reelroom "$PKG/usr/bin/reelroom"
ln -s /opt/reelroom/reelroom-server "$PKG/usr/bin/reelroom-server"
for size in 16 32 48 64 128 256 512; do
  mkdir -p "$PKG/usr/share/icons/hicolor/${size}x${size}/apps"
  cp "resources/icons/reelroom-${size}.png" "$PKG/usr/share/icons/hicolor/${size}x${size}/apps/reelroom.png"
done
cp installer/linux/reelroom.desktop "$PKG/usr/share/applications/reelroom.desktop"
cp installer/linux/reelroom-server.service "$PKG/usr/lib/systemd/user/reelroom-server.service"
mkdir -p "$PKG/usr/share/doc/reelroom"
cp "$BUNDLE/_internal/NOTICE.txt" "$PKG/usr/share/doc/reelroom/copyright"
KIB=$(du -sk "$PKG" | cut -f1)
"$PYTHON" -c "import sys; sys.path.insert(0, 'installer'); import inputs; \
print(inputs.deb_control('$VERSION', $KIB, '$DEBARCH'), end='')" > "$PKG/DEBIAN/control"
DEB="dist/reelroom_${VERSION}_${DEBARCH}.deb"
dpkg-deb --root-owner-group -Zxz -z"${DEB_XZ_LEVEL:-2}" --build "$PKG" "$DEB" >/dev/null

end=$(date +%s)
echo "bundle: $(du -sh "$BUNDLE" | cut -f1) in $BUNDLE"
if [ -f "$BUNDLE/_internal/web/index.html" ]; then
  echo "web app: bundled from ${REELROOM_WEB_DIST} ($(du -sh "$BUNDLE/_internal/web" | cut -f1))"
else
  echo "web app: not bundled (set REELROOM_WEB_DIST to bundle jellyfin-web)"
fi
echo "tar.gz: $(du -h "dist/reelroom-${VERSION}-linux-${ARCH}.tar.gz" | cut -f1)"
echo "deb:    $(du -h "$DEB" | cut -f1) $DEB"
echo "build time: $((end - start)) s"
