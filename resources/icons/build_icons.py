"""Draw Reelroom's app icon and default splash screen (a dev-time tool, run once, output committed).

    /work/venv/bin/python resources/icons/build_icons.py

Writes, next to this script: reelroom.svg, reelroom-1024.png, reelroom-<n>.png for n in
16, 32, 48, 64, 128, 256, 512, reelroom.ico and reelroom.icns; and
resources/branding/splashscreen.png (1920x1080). The glyph is a film reel whose hub is a play
button, on a rounded indigo square. The SVG and the PNGs share the geometry below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont

HERE = Path(__file__).resolve().parent
BRANDING = HERE.parent / "branding"

PNG_SIZES = (16, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
SPLASH_SIZE = (1920, 1080)


@dataclass(frozen=True)
class Glyph:
    """Icon geometry as fractions of the icon's side."""

    margin: float
    corner: float
    reel_radius: float
    hole_orbit: float
    hole_radius: float
    play_radius: float  # circumradius of the play triangle; 0 leaves it out
    play_shift: float  # optical centring: nudge the triangle right
    shadow: bool


FULL = Glyph(0.035, 0.225, 0.335, 0.19, 0.083, 0.08, 0.014, True)
# 32 px and below: a bigger reel with bigger holes and no play button, so it stays legible.
SMALL = Glyph(0.0, 0.2, 0.41, 0.215, 0.1, 0.0, 0.0, False)
HOLE_COUNT = 5
SMALL_LIMIT = 32

# Colours.
BACKGROUND_TOP = (52, 56, 128)
BACKGROUND_BOTTOM = (17, 19, 46)
REEL_TOP = (255, 200, 87)
REEL_BOTTOM = (255, 104, 64)
SPLASH_CENTRE = (34, 38, 86)
SPLASH_EDGE = (9, 10, 24)
TITLE_COLOUR = (246, 242, 234)
TITLE_ACCENT = (255, 170, 80)

FONT_CANDIDATES = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
    "/usr/share/fonts/TTF/DejaVuSans-Bold.ttf",
    "/Library/Fonts/Arial Bold.ttf",
    "C:/Windows/Fonts/arialbd.ttf",
)


def vertical_gradient(
    size: tuple[int, int], top: tuple[int, int, int], bottom: tuple[int, int, int]
) -> Image.Image:
    ramp = Image.linear_gradient("L").resize(size, Image.Resampling.BICUBIC)
    return Image.composite(Image.new("RGB", size, bottom), Image.new("RGB", size, top), ramp)


def hole_centres(glyph: Glyph, side: float) -> list[tuple[float, float]]:
    centre, orbit = side / 2, glyph.hole_orbit * side
    angles = [math.radians(-90 + i * 360 / HOLE_COUNT) for i in range(HOLE_COUNT)]
    return [(centre + orbit * math.cos(a), centre + orbit * math.sin(a)) for a in angles]


def play_triangle(glyph: Glyph, side: float) -> list[tuple[float, float]]:
    cx, cy, r = side / 2 + glyph.play_shift * side, side / 2, glyph.play_radius * side
    return [(cx + r * math.cos(math.radians(a)), cy + r * math.sin(math.radians(a))) for a in (0, 120, 240)]


def reel_mask(glyph: Glyph, side: int) -> Image.Image:
    """White where the reel is solid: a disc minus its holes and the play cut-out."""
    mask = Image.new("L", (side, side), 0)
    draw = ImageDraw.Draw(mask)
    c, r = side / 2, glyph.reel_radius * side
    draw.ellipse((c - r, c - r, c + r, c + r), fill=255)
    h = glyph.hole_radius * side
    for x, y in hole_centres(glyph, side):
        draw.ellipse((x - h, y - h, x + h, y + h), fill=0)
    if glyph.play_radius:
        draw.polygon(play_triangle(glyph, side), fill=0)
    return mask


def draw_reel(glyph: Glyph, side: int, background: bool = True) -> Image.Image:
    """The glyph at ``side`` pixels, drawn at 4x and scaled down for smooth edges.

    Without ``background`` only the reel (and its shadow) is drawn, on transparency.
    """
    big = side * 4
    icon = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    mask = reel_mask(glyph, big)
    if background:
        body = Image.new("L", (big, big), 0)
        inset = glyph.margin * big
        box = (inset, inset, big - inset - 1, big - inset - 1)
        ImageDraw.Draw(body).rounded_rectangle(box, radius=glyph.corner * big, fill=255)
        icon.paste(vertical_gradient((big, big), BACKGROUND_TOP, BACKGROUND_BOTTOM), (0, 0), body)
    if glyph.shadow:
        # A soft shadow under the reel lifts it off the background.
        shadow = ImageChops.offset(mask.filter(ImageFilter.GaussianBlur(big * 0.02)), 0, int(big * 0.012))
        shadow = ImageChops.multiply(shadow, Image.new("L", (big, big), 120))
        shadow_layer = Image.new("RGBA", (big, big), (5, 6, 18, 0))
        shadow_layer.putalpha(shadow)
        icon = Image.alpha_composite(icon, shadow_layer)
    icon.paste(vertical_gradient((big, big), REEL_TOP, REEL_BOTTOM), (0, 0), mask)
    return icon.resize((side, side), Image.Resampling.LANCZOS)


def draw_icon(side: int) -> Image.Image:
    """The app icon at ``side`` pixels (the simplified glyph at small sizes)."""
    return draw_reel(SMALL if side <= SMALL_LIMIT else FULL, side)


def svg_circle(cx: float, cy: float, r: float) -> str:
    return f"M{cx - r:.1f},{cy:.1f}a{r:.1f},{r:.1f} 0 1,0 {2 * r:.1f},0a{r:.1f},{r:.1f} 0 1,0 {-2 * r:.1f},0Z"


def icon_svg(glyph: Glyph = FULL, side: int = 1024) -> str:
    def hexcolour(rgb: tuple[int, int, int]) -> str:
        return "#{:02x}{:02x}{:02x}".format(*rgb)

    c = side / 2
    reel = [svg_circle(c, c, glyph.reel_radius * side)]
    reel += [svg_circle(x, y, glyph.hole_radius * side) for x, y in hole_centres(glyph, side)]
    if glyph.play_radius:
        reel.append("M" + "L".join(f"{x:.1f},{y:.1f}" for x, y in play_triangle(glyph, side)) + "Z")
    inset, body = glyph.margin * side, side - 2 * glyph.margin * side
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="{side}" height="{side}" viewBox="0 0 {side} {side}">
  <title>Reelroom</title>
  <defs>
    <linearGradient id="background" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="{hexcolour(BACKGROUND_TOP)}"/>
      <stop offset="1" stop-color="{hexcolour(BACKGROUND_BOTTOM)}"/>
    </linearGradient>
    <linearGradient id="reel" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="{hexcolour(REEL_TOP)}"/>
      <stop offset="1" stop-color="{hexcolour(REEL_BOTTOM)}"/>
    </linearGradient>
  </defs>
  <rect x="{inset:.1f}" y="{inset:.1f}" width="{body:.1f}" height="{body:.1f}" rx="{glyph.corner * side:.1f}" fill="url(#background)"/>
  <path fill="url(#reel)" fill-rule="evenodd" d="{"".join(reel)}"/>
</svg>
"""


def title_font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for candidate in FONT_CANDIDATES:
        if Path(candidate).is_file():
            return ImageFont.truetype(candidate, size)
    return ImageFont.load_default(size)


def draw_splash() -> Image.Image:
    """Dark backdrop with a soft central glow, the reel, and the word "Reelroom"."""
    width, height = SPLASH_SIZE
    glow = Image.radial_gradient("L").resize((int(width * 1.4), int(width * 1.4)), Image.Resampling.BICUBIC)
    ox, oy = (glow.width - width) // 2, (glow.height - height) // 2
    glow = glow.crop((ox, oy, ox + width, oy + height))
    edge, centre = Image.new("RGB", SPLASH_SIZE, SPLASH_EDGE), Image.new("RGB", SPLASH_SIZE, SPLASH_CENTRE)
    splash = Image.composite(edge, centre, glow)

    reel_side, gap = 330, 28
    font = title_font(172)
    first, second = "Reel", "room"
    left, top, right, bottom = font.getbbox(first + second)
    first_width = font.getlength(first)
    group = reel_side + gap + (right - left)
    x = (width - group) // 2
    reel = draw_reel(FULL, reel_side, background=False)
    splash.paste(reel, (x, (height - reel_side) // 2), reel)

    draw = ImageDraw.Draw(splash)
    text_x = x + reel_side + gap - left
    text_y = (height - (bottom - top)) // 2 - top
    draw.text((text_x, text_y), first, font=font, fill=TITLE_ACCENT)
    draw.text((text_x + first_width, text_y), second, font=font, fill=TITLE_COLOUR)
    return splash


def main() -> None:
    master = draw_icon(1024)
    master.save(HERE / "reelroom-1024.png", optimize=True)
    for side in PNG_SIZES:
        draw_icon(side).save(HERE / f"reelroom-{side}.png", optimize=True)
    # ICO and ICNS take the hand-drawn small sizes instead of scaling the master down.
    smaller = [draw_icon(side) for side in ICO_SIZES if side < 1024]
    master.save(HERE / "reelroom.ico", sizes=[(s, s) for s in ICO_SIZES], append_images=smaller)
    icns_sizes = (16, 32, 64, 128, 256, 512)
    master.save(HERE / "reelroom.icns", append_images=[draw_icon(side) for side in icns_sizes])
    (HERE / "reelroom.svg").write_text(icon_svg(), encoding="utf-8")

    BRANDING.mkdir(exist_ok=True)
    draw_splash().save(BRANDING / "splashscreen.png", optimize=True)


if __name__ == "__main__":
    main()
