"""Make each OS's icon from one source image (resources/icons/reelroom-1024.png), with Pillow.

    python installer/make_icons.py [--out DIR]

Writes reelroom.ico (Windows: 16..256 px), reelroom.icns (macOS: 16..1024 px) and the hicolor PNG
sizes for Linux (reelroom-<n>.png). Default output: installer/build/icons (the .deb takes its
hicolor icons from there; resources/icons holds the committed copies drawn by build_icons.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "resources" / "icons" / "reelroom-1024.png"
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
HICOLOR_SIZES = (16, 32, 48, 64, 128, 256, 512)


def make_icons(out: Path, source: Path = SOURCE) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    image = Image.open(source).convert("RGBA")
    if image.size[0] != image.size[1] or image.size[0] < 512:
        raise ValueError(f"{source} must be a square image of at least 512 px")
    written = []
    ico = out / "reelroom.ico"
    image.save(ico, format="ICO", sizes=[(n, n) for n in ICO_SIZES])
    written.append(ico)
    icns = out / "reelroom.icns"
    image.resize((1024, 1024), Image.LANCZOS).save(icns, format="ICNS")
    written.append(icns)
    for n in HICOLOR_SIZES:
        png = out / f"reelroom-{n}.png"
        if png.resolve() != source.resolve():
            image.resize((n, n), Image.LANCZOS).save(png, optimize=True)
            written.append(png)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "installer" / "build" / "icons")
    for path in make_icons(parser.parse_args().out):
        print(path)


if __name__ == "__main__":
    main()
