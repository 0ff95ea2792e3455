"""Per-file cost of the media helpers the scanner and the image route call, on files made by
tests/mediagen.py (moved here from tests/media: wall-time figures belong in a bench, not in test
assertions):

- ``read_audio_tags``: ms per file, one song per audio format (mp3, flac, m4a with a cover;
  ogg, opus), warm OS cache;
- ``probe_file``: ms per file (a Matroska movie with subtitles and chapters, an MP4 clip, the
  songs);
- ``render_image`` (1280x720 JPEG to 300 px wide) and ``blurhash_of``: ms each.

Figures are printed with the budget they were once asserted against (tags and probe 100 ms per
file, resize and blurhash 500 ms each), flagged when above it.

    python bench/media_speed.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.media.images import blurhash_of, render_image  # noqa: E402
from server.media.probe import probe_file  # noqa: E402
from server.media.tags import read_audio_tags  # noqa: E402
from tests.mediagen import make_audio, make_image, make_video  # noqa: E402

SONG_TAGS = {"title": "Highway Song", "artist": "AC/DC; Foo feat. Bar", "album": "Loud Album",
             "album_artist": "AC/DC", "track": "3/10", "disc": "1/2", "date": "2001-05-02", "genre": "Rock;Pop"}
AUDIO_SUFFIXES = (".mp3", ".flac", ".m4a", ".ogg", ".opus")


def per_call_ms(fn: Callable[[], object], rounds: int) -> float:
    fn()  # warm the OS cache and any lazy import
    start = time.perf_counter()
    for _ in range(rounds):
        fn()
    return (time.perf_counter() - start) / rounds * 1000


def line(label: str, figures: dict[str, float], budget: float) -> str:
    over = [k for k, v in figures.items() if v >= budget]
    return (f"{label}: " + ", ".join(f"{k} {v:.2f}" for k, v in figures.items())
            + f"  (budget {budget:.0f} ms{'; OVER: ' + ', '.join(over) if over else ''})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reelroom-media-speed-") as tmp:
        root = Path(tmp)
        cover = make_image(root / "cover.jpg", 64, 64, color="red")
        songs = {s: make_audio(root / f"song{s}", tags=SONG_TAGS, cover=cover if s in (".mp3", ".flac", ".m4a")
                               else None) for s in AUDIO_SUFFIXES}
        movie = make_video(root / "movie.mkv", subtitles=[("eng", "Hello"), ("fre", "Bonjour")], chapters=True,
                           tags={"title": "My Movie"})
        clip = make_video(root / "clip.mp4", subtitles=[("eng", "Hello")], chapters=True)
        backdrop = make_image(root / "backdrop.jpg", 1280, 720)

        tags = {s: per_call_ms(lambda p=p: read_audio_tags(p), args.rounds) for s, p in songs.items()}
        print(line("read_audio_tags ms/file", tags, 100))
        files = [movie, clip, *songs.values()]
        probes = {p.name: per_call_ms(lambda p=p: probe_file(p), max(1, args.rounds // 3)) for p in files}
        print(line("probe_file ms/file", probes, 100))
        images = {"resize 1280x720 -> 300 px": per_call_ms(lambda: render_image(backdrop, max_width=300),
                                                            max(1, args.rounds // 6)),
                  "blurhash": per_call_ms(lambda: blurhash_of(backdrop), max(1, args.rounds // 6))}
        print(line("images ms", images, 500))


if __name__ == "__main__":
    main()
