"""Image sizes, resizing with Jellyfin's sizing rules, BlurHash, image tags, video frames.

Sizing follows Jellyfin's image processor: ``width``/``height`` set the size (one of them
keeps the aspect ratio, both give exactly that size), ``max_width``/``max_height`` shrink to
fit and never enlarge, and ``fill_width``/``fill_height`` shrink until the image just covers
that box, keeping its aspect ratio (clients crop when displaying). ``crop_to_fill=True``
additionally centre-crops to exactly the fill box.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import subprocess
import tempfile
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING

from server.media import spawn

if TYPE_CHECKING:
    from PIL import Image

# Pillow and blurhash-rs are imported by the functions that use them: start-up stays light.

ImageSource = str | os.PathLike[str] | bytes

OUTPUT_FORMATS = {"jpg": "JPEG", "jpeg": "JPEG", "png": "PNG", "webp": "WEBP"}
MIME_TYPES = {"jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "webp": "image/webp",
              "gif": "image/gif", "bmp": "image/bmp"}
MAX_OUTPUT_SIDE = 16384
BLURHASH_MAX_SIDE = 128  # larger inputs change the hash imperceptibly and cost more
_EXIF_ORIENTATION = 0x0112
_DEFAULT_FOREGROUND_OPACITY = 0.4


class ImageError(ValueError):
    """Base class for image problems the HTTP layer reports as a client error."""


class ImageDecodeError(ImageError):
    """The source is missing, unreadable or not an image."""


class ImageRequestError(ImageError):
    """The requested processing options are invalid."""


class FrameExtractionError(ImageError):
    """ffmpeg could not produce a frame from the video."""


def _open(src: ImageSource) -> Image.Image:
    from PIL import Image, UnidentifiedImageError
    try:
        fileobj: IO[bytes] | str = io.BytesIO(src) if isinstance(src, bytes) else os.fspath(src)
        return Image.open(fileobj)
    except (OSError, UnidentifiedImageError, Image.DecompressionBombError, ValueError) as exc:
        raise ImageDecodeError(f"cannot read image: {exc}") from exc


def _format_name(img: Image.Image) -> str:
    name = (img.format or "").lower()
    return "jpg" if name in ("jpeg", "mpo") else name


def _orientation(img: Image.Image) -> int:
    try:
        value = img.getexif().get(_EXIF_ORIENTATION, 1)
        return int(value) if int(value) in range(1, 9) else 1
    except (ValueError, TypeError, OSError, SyntaxError):
        return 1


def _oriented_size(img: Image.Image, orientation: int) -> tuple[int, int]:
    width, height = img.size
    return (height, width) if orientation in (5, 6, 7, 8) else (width, height)


def image_info(src: ImageSource) -> tuple[int, int, str]:
    """(width, height, format) as displayed (EXIF rotation applied); format like "jpg", "png"."""
    with _open(src) as img:
        width, height = _oriented_size(img, _orientation(img))
        return width, height, _format_name(img)


def _rounded(value: float) -> int:
    return round(value)  # round-half-even, as .NET's Convert.ToInt32


def target_size(original: tuple[int, int], *, width: int | None = None, height: int | None = None,
                max_width: int | None = None, max_height: int | None = None,
                fill_width: int | None = None, fill_height: int | None = None) -> tuple[int, int]:
    """The output size Jellyfin's sizing rules give for an image of size ``original``."""
    orig_w, orig_h = original
    new_w, new_h = orig_w, orig_h
    if width and height:
        new_w, new_h = width, height
    elif height:
        new_w, new_h = _rounded(height / new_h * new_w), height
    elif width:
        new_w, new_h = width, _rounded(width / new_w * new_h)
    if max_height and max_height < new_h:
        new_w, new_h = _rounded(max_height / new_h * new_w), max_height
    if max_width and max_width < new_w:
        new_w, new_h = max_width, _rounded(max_width / new_w * new_h)
    if fill_width or fill_height:
        scale = min(new_w / (fill_width or 1), new_h / (fill_height or 1))
        if scale >= 1:  # only ever shrink to cover the box
            new_w, new_h = math.ceil(new_w / scale), math.ceil(new_h / scale)
    return max(new_w, 1), max(new_h, 1)


def _check_dimension(name: str, value: int | None) -> None:
    if value is not None and not (0 < value <= MAX_OUTPUT_SIDE):
        raise ImageRequestError(f"{name} must be between 1 and {MAX_OUTPUT_SIDE}, got {value}")


def _parse_color(text: str) -> tuple[int, int, int, int]:
    """"#RGB", "#ARGB", "#RRGGBB" or "#AARRGGBB" (alpha first, as Jellyfin clients send)."""
    digits = text.strip().lstrip("#")
    if len(digits) in (3, 4):
        digits = "".join(ch * 2 for ch in digits)
    try:
        if len(digits) == 6:
            return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16), 255
        if len(digits) == 8:
            alpha, red, green, blue = (int(digits[i:i + 2], 16) for i in (0, 2, 4, 6))
            return red, green, blue, alpha
    except ValueError:
        pass
    raise ImageRequestError(f"invalid colour {text!r}")


def _foreground_alpha(layer: str | float) -> int:
    try:
        opacity = float(layer)
    except (TypeError, ValueError):
        opacity = _DEFAULT_FOREGROUND_OPACITY
    opacity = min(max(opacity, 0.0), 1.0)
    return int((1 - opacity) * 255)


def _read_bytes(src: ImageSource) -> bytes:
    if isinstance(src, bytes):
        return src
    try:
        return Path(src).read_bytes()
    except OSError as exc:
        raise ImageDecodeError(f"cannot read image: {exc}") from exc


def render_image(
    src: ImageSource,
    *,
    max_width: int | None = None,
    max_height: int | None = None,
    width: int | None = None,
    height: int | None = None,
    fill_width: int | None = None,
    fill_height: int | None = None,
    quality: int = 90,
    fmt: str = "jpg",
    blur: int | None = None,
    background_color: str | None = None,
    foreground_layer: str | float | None = None,
    crop_to_fill: bool = False,
    percent_played: float | None = None,
    unplayed_count: int | None = None,
) -> bytes:
    """Resize/re-encode an image; returns the encoded bytes in ``fmt`` (jpg, png or webp).

    The source bytes come back unchanged when nothing would change. Raises
    ``ImageRequestError`` for bad options and ``ImageDecodeError`` for unreadable sources.
    """
    from PIL import Image, ImageFilter, ImageOps
    fmt = fmt.lower().lstrip(".")
    if fmt not in OUTPUT_FORMATS:
        raise ImageRequestError(f"unsupported output format {fmt!r}; use jpg, png or webp")
    for name, value in (("max_width", max_width), ("max_height", max_height), ("width", width),
                        ("height", height), ("fill_width", fill_width), ("fill_height", fill_height)):
        _check_dimension(name, value)
    if not 1 <= quality <= 100:
        raise ImageRequestError(f"quality must be between 1 and 100, got {quality}")
    if blur is not None and not 0 <= blur <= 1000:
        raise ImageRequestError(f"blur must be between 0 and 1000, got {blur}")
    background = _parse_color(background_color) if background_color else None
    if percent_played is not None and not 0 <= percent_played <= 100:
        raise ImageRequestError(f"percentPlayed must be between 0 and 100, got {percent_played}")
    if unplayed_count is not None and unplayed_count < 0:
        raise ImageRequestError(f"unplayedCount must not be negative, got {unplayed_count}")
    overlays = bool(percent_played) or bool(unplayed_count)

    with _open(src) as img:
        orientation = _orientation(img)
        original = _oriented_size(img, orientation)
        size = target_size(original, width=width, height=height, max_width=max_width,
                           max_height=max_height, fill_width=fill_width, fill_height=fill_height)
        crop_box = None
        if crop_to_fill and fill_width and fill_height:
            crop_box = (min(fill_width, size[0]), min(fill_height, size[1]))
        unchanged = (size == original and crop_box in (None, size) and orientation == 1
                     and not blur and background is None and foreground_layer is None and not overlays
                     and _format_name(img) == ("jpg" if fmt == "jpeg" else fmt))
        if unchanged:
            return _read_bytes(src)
        if img.format == "JPEG":
            # Let libjpeg decode at a reduced scale (1/2, 1/4, 1/8) that is still >= the target.
            draft_size = (size[1], size[0]) if orientation in (5, 6, 7, 8) else size
            img.draft("RGB", draft_size)
        try:
            frame = ImageOps.exif_transpose(img) if orientation != 1 else img
            frame = _with_alpha_mode(frame)
            frame.load()
            if frame.size != size:
                frame = frame.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
        except (OSError, ValueError, Image.DecompressionBombError) as exc:
            raise ImageDecodeError(f"cannot decode image: {exc}") from exc

    if crop_box and crop_box != frame.size:
        left = (frame.width - crop_box[0]) // 2
        top = (frame.height - crop_box[1]) // 2
        frame = frame.crop((left, top, left + crop_box[0], top + crop_box[1]))
    if background is not None:
        canvas = Image.new("RGBA", frame.size, background)
        canvas.alpha_composite(frame.convert("RGBA"))
        frame = canvas
    if blur:
        frame = frame.filter(ImageFilter.GaussianBlur(blur))
    if foreground_layer is not None:
        overlay = Image.new("RGBA", frame.size, (0, 0, 0, _foreground_alpha(foreground_layer)))
        frame = Image.alpha_composite(frame.convert("RGBA"), overlay)
    if overlays:
        frame = _draw_indicators(frame, percent_played, unplayed_count)
    return _encode(frame, fmt, quality)


def _draw_indicators(frame: Image.Image, percent_played: float | None,
                     unplayed_count: int | None) -> Image.Image:
    """A played-percentage bar along the bottom edge and an unplayed-count badge in the top right
    corner, sized relative to the image (Jellyfin draws the same two indicators)."""
    from PIL import Image, ImageDraw, ImageFont
    frame = frame.convert("RGBA")
    layer = Image.new("RGBA", frame.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    width, height = frame.size
    if percent_played:
        bar = max(2, round(height * 0.02))
        draw.rectangle((0, height - bar, width, height), fill=(0, 0, 0, 200))
        draw.rectangle((0, height - bar, round(width * percent_played / 100), height), fill=(82, 181, 75, 255))
    if unplayed_count:
        text = "99+" if unplayed_count > 99 else str(unplayed_count)
        size = max(12, round(min(width, height) * 0.15))
        margin = max(2, size // 5)
        box = (width - margin - size, margin, width - margin, margin + size)
        draw.ellipse(box, fill=(82, 181, 75, 255))
        font = ImageFont.load_default(size=max(8, round(size * (0.5 if len(text) < 3 else 0.38))))
        draw.text(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), text, fill=(255, 255, 255, 255),
                  font=font, anchor="mm")
    return Image.alpha_composite(frame, layer)


def _with_alpha_mode(img: Image.Image) -> Image.Image:
    if img.mode in ("RGB", "RGBA", "L"):
        return img
    if img.mode in ("LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        return img.convert("RGBA")
    return img.convert("RGB")


def _encode(img: Image.Image, fmt: str, quality: int) -> bytes:
    from PIL import Image
    out = io.BytesIO()
    pil_format = OUTPUT_FORMATS[fmt]
    if pil_format == "JPEG":
        if img.mode not in ("RGB", "L"):
            flat = Image.new("RGB", img.size, (0, 0, 0))
            flat.paste(img, mask=img.getchannel("A") if "A" in img.getbands() else None)
            img = flat
        img.save(out, "JPEG", quality=quality, optimize=False)
    elif pil_format == "WEBP":
        img.save(out, "WEBP", quality=quality, method=2)
    else:
        img.save(out, "PNG", compress_level=3)
    return out.getvalue()


def blurhash_components(width: int, height: int) -> tuple[int, int]:
    """Jellyfin's component counts: near-square tiles, about 16 in all, at most 9 per axis."""
    x_float = math.sqrt(16.0 * width / height)
    y_float = x_float * height / width
    return min(int(x_float) + 1, 9), min(int(y_float) + 1, 9)


def blurhash_of(src: ImageSource, x_components: int | None = None,
                y_components: int | None = None) -> str:
    """BlurHash of an image, computed on a thumbnail of at most 128x128.

    Component counts default to Jellyfin's choice for the image's aspect ratio.
    """
    import blurhash_rs
    from PIL import Image, ImageOps
    for value in (x_components, y_components):
        if value is not None and not 1 <= value <= 9:
            raise ImageRequestError(f"BlurHash components must be 1-9, got {value}")
    with _open(src) as img:
        orientation = _orientation(img)
        width, height = _oriented_size(img, orientation)
        if width <= 0 or height <= 0:
            raise ImageDecodeError("image has no pixels")
        auto_x, auto_y = blurhash_components(width, height)
        if img.format == "JPEG":
            img.draft("RGB", (BLURHASH_MAX_SIDE, BLURHASH_MAX_SIDE))
        try:
            thumb = ImageOps.exif_transpose(img) if orientation != 1 else img.copy()
            thumb.thumbnail((BLURHASH_MAX_SIDE, BLURHASH_MAX_SIDE), Image.Resampling.BILINEAR)
            thumb = thumb.convert("RGB")
        except (OSError, ValueError, Image.DecompressionBombError) as exc:
            raise ImageDecodeError(f"cannot decode image: {exc}") from exc
    return blurhash_rs.blurhash_encode(thumb, x_components or auto_x, y_components or auto_y)


def image_tag(path: str | os.PathLike[str], mtime: float | datetime, size: int) -> str:
    """A stable 32-hex tag for an image file that changes when its path, mtime or size does."""
    if isinstance(mtime, datetime):
        mtime = mtime.timestamp()
    ticks = round(mtime * 10_000_000)
    key = f"{os.fspath(path)}\x00{ticks}\x00{size}"
    return hashlib.md5(key.encode("utf-8", "surrogateescape"), usedforsecurity=False).hexdigest()


def extract_video_frame(ffmpeg: str | os.PathLike[str], video_path: str | os.PathLike[str],
                        at_seconds: float, out_path: str | os.PathLike[str], *,
                        timeout: float = 60.0) -> Path:
    """Write one frame of the video at ``at_seconds`` to ``out_path`` (format by suffix).

    If the position lies past the end, the first frame is used instead. Writes atomically;
    raises ``FrameExtractionError`` when ffmpeg fails or times out.
    """
    if not math.isfinite(at_seconds) or at_seconds < 0:
        raise ImageRequestError(f"frame position must be a non-negative number, got {at_seconds}")
    video = os.fspath(video_path)
    if not os.path.isfile(video):
        raise FrameExtractionError(f"no such video file: {video!r}")
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".frame-", suffix=out.suffix or ".jpg", dir=out.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        for position in (at_seconds, 0.0) if at_seconds > 0 else (0.0,):
            tmp.unlink(missing_ok=True)
            _run_frame_grab(os.fspath(ffmpeg), video, position, tmp, timeout)
            if tmp.exists() and tmp.stat().st_size > 0:
                os.replace(tmp, out)
                return out
        raise FrameExtractionError(f"ffmpeg produced no frame for {video!r}")
    finally:
        tmp.unlink(missing_ok=True)


def _run_frame_grab(ffmpeg: str, video: str, position: float, out: Path, timeout: float) -> None:
    cmd = [ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin", "-y",
           "-ss", f"{position:.3f}", "-i", video,
           "-map", "0:V:0", "-frames:v", "1", "-an", "-sn", "-dn", "-update", "1", os.fspath(out)]
    try:
        proc = spawn.run(cmd, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise FrameExtractionError(f"ffmpeg timed out after {timeout:g} s on {video!r}") from exc
    except OSError as exc:
        raise FrameExtractionError(f"cannot run ffmpeg {ffmpeg!r}: {exc}") from exc
    if proc.returncode != 0:
        if "matches no streams" in proc.stderr:
            raise FrameExtractionError(f"{video!r} has no video stream")
        detail = proc.stderr.strip().splitlines()[-1:] or ["unknown error"]
        raise FrameExtractionError(f"ffmpeg failed on {video!r}: {detail[0]}")
