#!/usr/bin/env bash
# Build Reelroom's Linux installers: the PyInstaller one-folder bundle, a .tar.gz of it and a .deb.
#
#   installer/linux/build.sh            # uses $PYTHON (default: /work/venv/bin/python, else python3)
#   SKIP_PYINSTALLER=1 installer/linux/build.sh   # only repackage dist/reelroom (tar.gz, .deb)
#   DEB_XZ_LEVEL=6 ...                  # smaller .deb, slower build (default 2, CI-friendly)
#
# Output in dist/: reelroom/ (the bundle), reelroom-<version>-linux-<arch>.tar.gz and
# reelroom_<version>_<debarch>.deb. The .deb installs the bundle to /opt/reelroom, /usr/bin/reelroom and
# /usr/bin/reelroom-server symlinks, a .desktop entry, hicolor icons and a systemd *user* unit
# (reelroom-server.service). Needs the `installer` extra (pyinstaller) and dpkg-deb.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
if [ -z "${PYTHON:-}" ]; then
  if [ -x /work/venv/bin/python ]; then PYTHON=/work/venv/bin/python; else PYTHON=python3; fi
fi
DIST=${DIST:-$ROOT/dist}
WORK=${WORK:-$ROOT/build/pyinstaller}
HERE=$ROOT/installer/linux

start=$(date +%s)
VERSION=$("$PYTHON" -c 'import sys; sys.path.insert(0, "installer"); from build_inputs import app_version; print(app_version())')
"$PYTHON" installer/build_inputs.py --dist "$DIST/reelroom" >/dev/null
"$PYTHON" installer/make_icons.py >/dev/null
if [ "${SKIP_PYINSTALLER:-0}" != 1 ]; then  # SKIP_PYINSTALLER=1 repackages an existing dist/reelroom
  "$PYTHON" -m PyInstaller --noconfirm --log-level WARN --distpath "$DIST" --workpath "$WORK" installer/reelroom.spec
fi
bundle_done=$(date +%s)

ARCH=$(uname -m)
case "$ARCH" in x86_64) DEBARCH=amd64 ;; aarch64) DEBARCH=arm64 ;; *) DEBARCH=$ARCH ;; esac

# tar.gz: the bundle as is (run ./reelroom/reelroom or ./reelroom/reelroom-server).
TARBALL="$DIST/reelroom-$VERSION-linux-$ARCH.tar.gz"
tar -C "$DIST" -czf "$TARBALL" reelroom

# .deb
PKG=$(mktemp -d)
trap 'rm -rf "$PKG"' EXIT
mkdir -p "$PKG/DEBIAN" "$PKG/opt" "$PKG/usr/bin" "$PKG/usr/share/applications" "$PKG/usr/lib/systemd/user"
cp -a "$DIST/reelroom" "$PKG/opt/reelroom"
ln -s /opt/reelroom/reelroom "$PKG/usr/bin/reelroom"
ln -s /opt/reelroom/reelroom-server "$PKG/usr/bin/reelroom-server"
install -m 644 "$HERE/reelroom.desktop" "$PKG/usr/share/applications/reelroom.desktop"
install -m 644 "$HERE/reelroom-server.service" "$PKG/usr/lib/systemd/user/reelroom-server.service"
for n in 16 32 48 64 128 256 512; do
  install -D -m 644 "installer/build/icons/reelroom-$n.png" "$PKG/usr/share/icons/hicolor/${n}x${n}/apps/reelroom.png"
done
install -D -m 644 resources/icons/reelroom.svg "$PKG/usr/share/icons/hicolor/scalable/apps/reelroom.svg"
SIZE_KB=$(du -sk "$PKG" | cut -f1)
cat > "$PKG/DEBIAN/control" <<CONTROL
Package: reelroom
Version: $VERSION
Section: video
Priority: optional
Architecture: $DEBARCH
Maintainer: Reelroom contributors <reelroom@localhost>
Installed-Size: $SIZE_KB
Depends: libc6, libglib2.0-0, libfontconfig1, libxkbcommon0, libdbus-1-3
Recommends: libxcb-cursor0, libxkbcommon-x11-0, libegl1
Description: Home media server that speaks the Jellyfin API
 Reelroom serves movies, shows and music to Jellyfin apps on your network.
 "reelroom" is the tray app (it runs the server); "reelroom-server" runs it headless,
 also as a systemd user unit: systemctl --user enable --now reelroom-server.
 Data is kept per user in ~/.local/share/Reelroom, never under /opt/reelroom.
CONTROL
cat > "$PKG/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
if command -v update-desktop-database >/dev/null 2>&1; then update-desktop-database -q /usr/share/applications || true; fi
if command -v gtk-update-icon-cache >/dev/null 2>&1; then gtk-update-icon-cache -q -t -f /usr/share/icons/hicolor || true; fi
exit 0
POSTINST
chmod 755 "$PKG/DEBIAN/postinst"
DEB="$DIST/reelroom_${VERSION}_${DEBARCH}.deb"
dpkg-deb --root-owner-group -Zxz -z"${DEB_XZ_LEVEL:-2}" --build "$PKG" "$DEB" >/dev/null
end=$(date +%s)

echo "bundle:  $DIST/reelroom ($(du -sh "$DIST/reelroom" | cut -f1))"
echo "tarball: $TARBALL ($(du -h "$TARBALL" | cut -f1))"
echo "deb:     $DEB ($(du -h "$DEB" | cut -f1))"
echo "time:    pyinstaller $((bundle_done - start)) s, total $((end - start)) s"
