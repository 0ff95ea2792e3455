"""Image sizing, encoding, BlurHash, image tags and video frames on real files."""

from __future__ import annotations

import io
from pathlib import Path

import blurhash_rs
import pytest
from PIL import Image

from server.media.images import (
    FrameExtractionError,
    ImageDecodeError,
    ImageRequestError,
    blurhash_components,
    blurhash_of,
    extract_video_frame,
    image_info,
    image_tag,
    render_image,
    target_size,
)
from tests.mediagen import ffmpeg_binary, make_image

BASE83 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~"


@pytest.fixture(scope="module")
def backdrop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_image(tmp_path_factory.mktemp("img") / "backdrop.jpg", 1280, 720)


@pytest.fixture(scope="module")
def poster_png(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_image(tmp_path_factory.mktemp("img") / "poster.png", 300, 450)


def decoded(data: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    img.load()
    return img


def test_image_info(backdrop: Path, poster_png: Path) -> None:
    assert image_info(backdrop) == (1280, 720, "jpg")
    assert image_info(poster_png) == (300, 450, "png")
    assert image_info(backdrop.read_bytes()) == (1280, 720, "jpg")


@pytest.mark.parametrize(("options", "expected"), [
    ({"max_width": 400}, (400, 225)),
    ({"max_height": 300}, (533, 300)),
    ({"max_width": 400, "max_height": 100}, (178, 100)),
    ({"max_width": 5000}, (1280, 720)),  # never enlarged
    ({"width": 320}, (320, 180)),
    ({"height": 90}, (160, 90)),
    ({"width": 100, "height": 100}, (100, 100)),  # both given: exactly that size
    ({"width": 2560}, (2560, 1440)),  # an explicit width may enlarge
    ({"fill_width": 400, "fill_height": 400}, (712, 400)),  # covers the box, aspect kept
    ({"fill_width": 600, "fill_height": 100}, (600, 338)),
    ({"fill_width": 4000, "fill_height": 4000}, (1280, 720)),
    ({"fill_width": 400}, (400, 225)),
    ({"max_width": 640, "fill_width": 300, "fill_height": 300}, (534, 300)),
])
def test_target_size_rules(options: dict[str, int], expected: tuple[int, int]) -> None:
    assert target_size((1280, 720), **options) == expected


@pytest.mark.parametrize(("options", "expected"), [
    ({"max_width": 400}, (400, 225)),
    ({"width": 100, "height": 100}, (100, 100)),
    ({"fill_width": 400, "fill_height": 400}, (712, 400)),
    ({"fill_width": 400, "fill_height": 400, "crop_to_fill": True}, (400, 400)),
    ({"height": 90}, (160, 90)),
])
def test_rendered_dimensions(backdrop: Path, options: dict[str, object],
                             expected: tuple[int, int]) -> None:
    assert decoded(render_image(backdrop, **options)).size == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(("fmt", "pil_format", "magic"), [
    ("jpg", "JPEG", b"\xff\xd8\xff"),
    ("png", "PNG", b"\x89PNG"),
    ("webp", "WEBP", b"RIFF"),
])
def test_output_formats(backdrop: Path, poster_png: Path, fmt: str, pil_format: str,
                        magic: bytes) -> None:
    for source in (backdrop, poster_png):
        data = render_image(source, max_width=120, fmt=fmt, quality=80)
        assert data.startswith(magic)
        img = decoded(data)
        assert img.format == pil_format and img.width == 120


def test_unchanged_request_returns_source_bytes(backdrop: Path) -> None:
    assert render_image(backdrop, max_width=4000, fmt="jpg") == backdrop.read_bytes()
    assert render_image(backdrop.read_bytes()) == backdrop.read_bytes()
    assert render_image(backdrop, fmt="png") != backdrop.read_bytes()


def test_exif_orientation_is_applied(tmp_path: Path) -> None:
    rotated = tmp_path / "rotated.jpg"
    exif = Image.Exif()
    exif[0x0112] = 6  # stored landscape, displayed rotated 90 degrees: portrait
    Image.new("RGB", (400, 200), "white").save(rotated, "JPEG", exif=exif)

    assert image_info(rotated)[:2] == (200, 400)
    assert decoded(render_image(rotated, max_height=100)).size == (50, 100)
    assert decoded(render_image(rotated)).size == (200, 400)


def test_background_foreground_and_blur(tmp_path: Path) -> None:
    transparent = tmp_path / "logo.png"
    Image.new("RGBA", (40, 20), (0, 0, 0, 0)).save(transparent)

    red = decoded(render_image(transparent, background_color="#FF0000", fmt="png")).convert("RGB")
    assert red.getpixel((10, 10)) == (255, 0, 0)
    argb = decoded(render_image(transparent, background_color="#FF00FF00", fmt="png")).convert("RGB")
    assert argb.getpixel((10, 10)) == (0, 255, 0)

    white = tmp_path / "white.png"
    Image.new("RGB", (40, 20), "white").save(white)
    dimmed = decoded(render_image(white, foreground_layer="0.4", fmt="png")).convert("L")
    assert 90 <= dimmed.getpixel((10, 10)) <= 110  # 60 % black over white
    blurred = decoded(render_image(white, blur=5, fmt="png"))
    assert blurred.size == (40, 20)


@pytest.mark.parametrize("options", [
    {"fmt": "tiff"},
    {"width": 0},
    {"max_height": -5},
    {"width": 100_000},
    {"quality": 0},
    {"background_color": "not-a-colour"},
    {"blur": -1},
])
def test_bad_options_raise_request_error(backdrop: Path, options: dict[str, object]) -> None:
    with pytest.raises(ImageRequestError):
        render_image(backdrop, **options)  # type: ignore[arg-type]


def test_unreadable_sources_raise_decode_error(tmp_path: Path) -> None:
    text = tmp_path / "fake.jpg"
    text.write_text("not an image")
    for source in (text, b"", b"garbage bytes", tmp_path / "missing.png"):
        with pytest.raises(ImageDecodeError):
            render_image(source, max_width=10)
        with pytest.raises(ImageDecodeError):
            image_info(source)
    assert issubclass(ImageDecodeError, ValueError)


def test_blurhash_components_follow_aspect_ratio() -> None:
    assert blurhash_components(1920, 1080) == (6, 4)
    assert blurhash_components(1000, 1500) == (4, 5)
    assert blurhash_components(100, 100) == (5, 5)
    assert blurhash_components(10000, 100) == (9, 1)


def test_blurhash_is_valid(backdrop: Path, poster_png: Path) -> None:
    for source, (x, y) in ((backdrop, (6, 4)), (poster_png, (4, 5))):
        blurhash = blurhash_of(source)
        assert set(blurhash) <= set(BASE83)
        assert len(blurhash) == 4 + 2 * x * y
        assert BASE83.index(blurhash[0]) == (x - 1) + (y - 1) * 9
        assert blurhash_rs.blurhash_decode(blurhash, 32, 32).size == (32, 32)
    explicit = blurhash_of(backdrop.read_bytes(), 4, 3)
    assert len(explicit) == 4 + 2 * 4 * 3
    with pytest.raises(ImageRequestError):
        blurhash_of(backdrop, 0, 3)
    with pytest.raises(ImageDecodeError):
        blurhash_of(b"nope")


def test_image_tag_changes_with_the_file(backdrop: Path) -> None:
    stat = backdrop.stat()
    tag = image_tag(backdrop, stat.st_mtime, stat.st_size)
    assert len(tag) == 32 and int(tag, 16) >= 0
    assert image_tag(backdrop, stat.st_mtime, stat.st_size) == tag
    assert image_tag(backdrop, stat.st_mtime + 1, stat.st_size) != tag
    assert image_tag(backdrop, stat.st_mtime, stat.st_size + 1) != tag
    assert image_tag(backdrop.with_name("other.jpg"), stat.st_mtime, stat.st_size) != tag


def test_extract_video_frame(movie_mkv: Path, tmp_path: Path) -> None:
    out = extract_video_frame(ffmpeg_binary(), movie_mkv, 1.0, tmp_path / "thumbs" / "frame.jpg")
    assert image_info(out) == (320, 240, "jpg")
    past_end = extract_video_frame(ffmpeg_binary(), movie_mkv, 3600, tmp_path / "late.png")
    assert image_info(past_end) == (320, 240, "png")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["frame.jpg", "late.png", "thumbs"]


def test_extract_video_frame_failures(songs: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(FrameExtractionError, match="no video stream"):
        extract_video_frame(ffmpeg_binary(), songs[".ogg"], 0, tmp_path / "x.jpg")
    with pytest.raises(FrameExtractionError):
        extract_video_frame(ffmpeg_binary(), tmp_path / "missing.mkv", 0, tmp_path / "y.jpg")
    with pytest.raises(ImageRequestError):
        extract_video_frame(ffmpeg_binary(), songs[".ogg"], -1, tmp_path / "z.jpg")
    assert list(tmp_path.iterdir()) == []
