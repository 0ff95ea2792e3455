"""The frame grabber and the collage maker on real files: ffmpeg on clips made by
tests/mediagen.py, Pillow for the collages; results decoded and measured."""

from __future__ import annotations

import asyncio

import pytest
from PIL import Image, ImageStat

from server.artwork import collage
from server.artwork.frames import DARK_SHARE, dark_share, grab_frame, positions_for
from server.media.images import FrameExtractionError, ImageDecodeError
from tests.mediagen import ffmpeg_binary, make_audio, make_image, make_video


def test_positions_follow_jellyfin():
    assert positions_for(100.0)[0] == 10.0  # 10% of the runtime first
    assert positions_for(None) == [10.0, 0.0]  # unknown runtime: 10 s in, else the start


def test_keyframe_after_a_black_opening(tmp_path):
    video = make_video(tmp_path / "dark.mkv", seconds=10, width=320, height=240, acodec=None,
                       black_seconds=3.5, keyint=24)
    grab = asyncio.run(grab_frame(ffmpeg_binary(), str(video), 10.0, tmp_path / "out" / "frame.jpg"))
    assert grab.path.is_file() and not grab.dark
    assert grab.seconds == 4.0  # 1 s and 2.5 s were black, 4 s is the first that is not
    assert grab.attempts == 3
    assert dark_share(grab.path)[0] < DARK_SHARE
    with Image.open(grab.path) as img:
        assert img.size == (320, 240)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["frame.jpg"]  # no scratch left


def test_all_black_video_keeps_the_least_dark_frame(tmp_path):
    video = make_video(tmp_path / "black.mkv", seconds=4, width=160, height=120, acodec=None,
                       black_seconds=10, keyint=12)
    grab = asyncio.run(grab_frame(ffmpeg_binary(), str(video), 4.0, tmp_path / "frame.jpg"))
    assert grab.dark and grab.path.is_file()
    with Image.open(grab.path) as img:
        assert img.size == (160, 120)


def test_anamorphic_video_gets_square_pixels(tmp_path):
    video = tmp_path / "wide.mkv"
    make_video(video, seconds=2, width=360, height=240, acodec=None)
    stretched = tmp_path / "sar.mkv"
    import subprocess

    subprocess.run([ffmpeg_binary(), "-v", "error", "-i", str(video), "-c", "copy",
                    "-aspect", "2:1", "-y", str(stretched)], check=True)  # SAR 4:3 on 360x240
    grab = asyncio.run(grab_frame(ffmpeg_binary(), str(stretched), 2.0, tmp_path / "f.jpg"))
    with Image.open(grab.path) as img:
        assert img.size == (480, 240)


def test_a_file_without_video_is_refused(tmp_path):
    audio = make_audio(tmp_path / "tone.mp3", seconds=1)
    with pytest.raises(FrameExtractionError, match="no video stream"):
        asyncio.run(grab_frame(ffmpeg_binary(), str(audio), 1.0, tmp_path / "f.jpg"))
    assert not (tmp_path / "f.jpg").exists()


def _mean(img: Image.Image, box) -> tuple[float, ...]:
    return tuple(ImageStat.Stat(img.crop(box)).mean)


def test_collage_shapes_and_cells(tmp_path):
    red = make_image(tmp_path / "red.png", 300, 450, color="red")
    blue = make_image(tmp_path / "blue.jpg", 400, 300, color="blue")
    for layout in (collage.THUMB, collage.SQUARE, collage.POSTER):
        out = tmp_path / f"{layout.name}.jpg"
        assert collage.make_collage([str(red), str(blue)], layout, out) == (layout.width, layout.height)
        with Image.open(out) as img:
            assert img.size == (layout.width, layout.height) and img.format == "JPEG"
    with Image.open(tmp_path / "square.jpg") as img:
        tl, tr = _mean(img, (0, 0, 300, 300)), _mean(img, (300, 0, 600, 300))
        bl, br = _mean(img, (0, 300, 300, 600)), _mean(img, (300, 300, 600, 600))
    assert tl[0] > tl[2] and tr[2] > tr[0]  # red source top-left, blue top-right
    assert all(abs(a - b) < 3 for a, b in zip(tl, br, strict=True))  # diagonals repeat
    assert all(abs(a - b) < 3 for a, b in zip(tr, bl, strict=True))
    with Image.open(tmp_path / "thumb.jpg") as img:  # a strip: left half red, right half blue
        left, right = _mean(img, (0, 0, 480, 540)), _mean(img, (480, 0, 960, 540))
    assert left[0] > left[2] and right[2] > right[0]


def test_collage_title_single_source_and_bad_sources(tmp_path):
    one = tmp_path / "one.jpg"
    Image.new("RGB", (200, 200), (240, 240, 240)).save(one)
    out = tmp_path / "titled.jpg"
    collage.make_collage([str(one)], collage.THUMB, out, title="Movies")
    with Image.open(out) as img:
        band = _mean(img, (0, 230, 960, 310))  # the dark band across the middle
        top = _mean(img, (0, 0, 960, 100))
    assert sum(band) < sum(top)
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not an image")
    collage.make_collage([str(broken), str(one)], collage.SQUARE, tmp_path / "skip.jpg")
    with Image.open(tmp_path / "skip.jpg") as img:  # the bad one is skipped: the good one fills it all
        corners = [_mean(img, box) for box in ((0, 0, 100, 100), (500, 500, 600, 600))]
    assert all(abs(a - b) < 8 for a, b in zip(*corners, strict=True))
    with pytest.raises(ImageDecodeError):
        collage.make_collage([str(broken), str(tmp_path / "missing.jpg")], collage.SQUARE, tmp_path / "none.jpg")
    assert not (tmp_path / "none.jpg").exists()
