"""Generate real media files for tests with the ffmpeg CLI (lavfi test sources).

Every function writes one file and returns its path. Media is tiny (a second or two,
small frames) so that a test suite can make hundreds of files on a 2-core machine.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def ffmpeg_binary() -> str:
    """The ffmpeg used to *make* test media: PATH first, then imageio-ffmpeg's."""
    found = shutil.which("ffmpeg")
    if found:
        return found
    import imageio_ffmpeg

    return imageio_ffmpeg.get_ffmpeg_exe()


def _run(args: list[str]) -> None:
    cmd = [ffmpeg_binary(), "-hide_banner", "-loglevel", "error", "-y", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"ffmpeg failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}")


def _metadata_args(tags: dict[str, str] | None) -> list[str]:
    args: list[str] = []
    for key, value in (tags or {}).items():
        args += ["-metadata", f"{key}={value}"]
    return args


def make_image(path: Path, width: int = 320, height: int = 480, color: str = "blue") -> Path:
    """A solid-colour JPEG or PNG (by suffix) with a test pattern on top."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _run(["-f", "lavfi", "-i", f"testsrc2=size={width}x{height}:duration=1:rate=1",
          "-f", "lavfi", "-i", f"color=c={color}:size={width}x{height}:duration=1",
          "-filter_complex", "[0][1]blend=all_mode=average", "-frames:v", "1", str(path)])
    return path


def make_video(
    path: Path,
    *,
    seconds: float = 2.0,
    width: int = 320,
    height: int = 240,
    vcodec: str = "libx264",
    acodec: str | None = "aac",
    audio_language: str | None = "eng",
    subtitles: list[tuple[str, str]] | None = None,
    tags: dict[str, str] | None = None,
    chapters: bool = False,
    fps: int = 24,
    cover: Path | None = None,
    black_seconds: float = 0.0,
    keyint: int | None = None,
) -> Path:
    """A video with a test pattern and (optionally) a sine-tone audio track.

    ``black_seconds`` makes the first seconds pure black (a fade-in, a studio card on black);
    ``keyint`` sets the keyframe interval in frames (x264's default is 250).

    ``subtitles`` is a list of (language, text) pairs embedded as text subtitle streams
    (mov_text for mp4, srt for mkv). ``chapters`` adds two chapters (mkv/mp4). ``cover`` attaches
    a JPEG as cover art (mkv attachment, seen by FFmpeg as an attached picture).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    args = ["-f", "lavfi", "-i", f"testsrc2=size={width}x{height}:rate={fps}:duration={seconds}"]
    inputs = 1
    maps = ["-map", "0:v"]
    if acodec:
        args += ["-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=48000:duration={seconds}"]
        maps += ["-map", f"{inputs}:a"]
        inputs += 1
    sub_files: list[Path] = []
    for i, (_lang, text) in enumerate(subtitles or []):
        srt = path.with_name(f".{path.stem}.sub{i}.srt")
        srt.write_text(f"1\n00:00:00,000 --> 00:00:01,000\n{text}\n\n", encoding="utf-8")
        sub_files.append(srt)
        args += ["-i", str(srt)]
        maps += ["-map", f"{inputs}:s"]
        inputs += 1
    meta_file: Path | None = None
    if chapters:
        half = int(seconds * 500)
        meta_file = path.with_name(f".{path.stem}.chapters.txt")
        meta_file.write_text(
            ";FFMETADATA1\n"
            f"[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND={half}\ntitle=Opening\n"
            f"[CHAPTER]\nTIMEBASE=1/1000\nSTART={half}\nEND={int(seconds * 1000)}\ntitle=Ending\n",
            encoding="utf-8",
        )
        args += ["-f", "ffmetadata", "-i", str(meta_file), "-map_chapters", str(inputs)]
        inputs += 1
    args += maps
    if black_seconds > 0:
        args += ["-vf", f"drawbox=x=0:y=0:w=iw:h=ih:color=black:t=fill:enable='lt(t,{black_seconds})'"]
    args += ["-c:v", vcodec]
    if vcodec == "libx264":
        args += ["-preset", "ultrafast", "-pix_fmt", "yuv420p"]
    if keyint:
        args += ["-g", str(keyint)]
    if acodec:
        args += ["-c:a", acodec]
        if audio_language:
            args += ["-metadata:s:a:0", f"language={audio_language}"]
    if subtitles:
        scodec = "mov_text" if path.suffix.lower() in (".mp4", ".m4v", ".mov") else "srt"
        args += ["-c:s", scodec]
        for i, (lang, _text) in enumerate(subtitles):
            args += [f"-metadata:s:s:{i}", f"language={lang}"]
    args += _metadata_args(tags)
    if cover is not None:
        args += ["-attach", str(cover), "-metadata:s:t", "mimetype=image/jpeg", "-metadata:s:t", "filename=cover.jpg"]
    args += ["-t", str(seconds), str(path)]
    try:
        _run(args)
    finally:
        for f in sub_files:
            f.unlink(missing_ok=True)
        if meta_file:
            meta_file.unlink(missing_ok=True)
    return path


def make_audio(
    path: Path,
    *,
    seconds: float = 1.0,
    tags: dict[str, str] | None = None,
    cover: Path | None = None,
    frequency: int = 440,
) -> Path:
    """An audio file (codec chosen by suffix: .mp3, .flac, .m4a, .ogg, .opus, .wav)
    with the given tags (title, artist, album, album_artist, track, disc, date, genre)
    and optionally an embedded cover image (mp3, flac, m4a)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    suffix = path.suffix.lower()
    codec = {
        ".mp3": "libmp3lame", ".flac": "flac", ".m4a": "aac", ".ogg": "libvorbis",
        ".opus": "libopus", ".wav": "pcm_s16le",
    }[suffix]
    args = ["-f", "lavfi", "-i", f"sine=frequency={frequency}:sample_rate=44100:duration={seconds}"]
    if cover and suffix in (".mp3", ".flac", ".m4a"):
        args += ["-i", str(cover), "-map", "0:a", "-map", "1:v", "-c:v", "mjpeg" if suffix != ".m4a" else "copy",
                 "-disposition:v", "attached_pic"]
        if suffix == ".mp3":
            args += ["-id3v2_version", "3", "-metadata:s:v", "title=Album cover", "-metadata:s:v", "comment=Cover (front)"]
    args += ["-c:a", codec]
    args += _metadata_args(tags)
    args += [str(path)]
    _run(args)
    return path


def make_srt(path: Path, lines: list[tuple[float, float, str]]) -> Path:
    """An external .srt subtitle file with (start_s, end_s, text) cues."""

    def ts(t: float) -> str:
        ms = int(round(t * 1000))
        return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"

    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"{i}\n{ts(a)} --> {ts(b)}\n{text}\n\n" for i, (a, b, text) in enumerate(lines, 1))
    path.write_text(body, encoding="utf-8")
    return path


def write_nfo(path: Path, root: str, **fields: object) -> Path:
    """A small Kodi NFO: scalar fields as elements; ``actors`` a list of (name, role);
    ``genres`` a list."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = []
    for key, value in fields.items():
        if key == "actors":
            for name, role in value:  # type: ignore[attr-defined]
                body.append(f"  <actor><name>{name}</name><role>{role}</role></actor>")
        elif key == "genres":
            body += [f"  <genre>{g}</genre>" for g in value]  # type: ignore[attr-defined]
        else:
            body.append(f"  <{key}>{value}</{key}>")
    path.write_text(f'<?xml version="1.0" encoding="UTF-8"?>\n<{root}>\n' + "\n".join(body) + f"\n</{root}>\n",
                    encoding="utf-8")
    return path


def make_test_library(root: Path) -> dict[str, Path]:
    """A small library of movies, a two-season show and tagged albums (about 20 media files).

    Returns the three library folders: {"movies", "shows", "music"}.
    """
    tiny = {"seconds": 1.0, "width": 160, "height": 120, "fps": 10}
    movies, shows, music = root / "movies", root / "shows", root / "music"

    inception = movies / "Inception (2010) [tmdbid-27205]"
    make_video(inception / "Inception (2010) [tmdbid-27205].mkv", subtitles=[("eng", "Hello")], chapters=True, **tiny)
    make_srt(inception / "Inception (2010) [tmdbid-27205].en.srt", [(0, 1, "Hello")])
    make_srt(inception / "Inception (2010) [tmdbid-27205].de.forced.srt", [(0, 1, "Hallo")])
    make_image(inception / "poster.jpg", 60, 90, color="red")
    make_image(inception / "fanart.jpg", 160, 90, color="green")
    write_nfo(inception / "movie.nfo", "movie", title="Inception", year=2010, plot="Dreams within dreams.",
              genres=["Science Fiction", "Action"], studio="Warner Bros.",
              actors=[("Leonardo DiCaprio", "Cobb"), ("Elliot Page", "Ariadne")], director="Christopher Nolan")

    blade = movies / "Blade Runner (1982)"
    make_video(blade / "Blade Runner (1982) - 1080p.mkv", **{**tiny, "width": 192, "height": 108})
    make_video(blade / "Blade Runner (1982) - 720p.mkv", **tiny)
    make_video(blade / "trailers" / "Blade Runner Trailer.mkv", **tiny)
    make_video(blade / "behind the scenes" / "Making Of.mkv", **tiny)

    make_video(movies / "Alien (1979).mp4", **tiny)
    make_video(movies / "Heat (1995).mkv", cover=make_image(root / "covers" / "heat.jpg", 40, 60, color="orange"), **tiny)
    make_image(movies / "Alien (1979)-poster.jpg", 60, 90, color="yellow")

    show = shows / "Show Name (2019)"
    write_nfo(show / "tvshow.nfo", "tvshow", title="Show Name", year=2019, plot="A show.", genres=["Drama"],
              status="Continuing")
    make_image(show / "poster.jpg", 60, 90, color="blue")
    make_image(show / "season01-poster.jpg", 60, 90, color="white")
    make_video(show / "Season 01" / "Show Name S01E01.mkv", **tiny)
    make_video(show / "Season 01" / "Show Name S01E02 - The Second.mkv", **tiny)
    write_nfo(show / "Season 01" / "Show Name S01E02 - The Second.nfo", "episodedetails", title="The Second One",
              season=1, episode=2, aired="2019-03-04")
    make_video(show / "Season 02" / "Show Name 2x02.mkv", **tiny)
    make_video(show / "Season 02" / "Show Name S02E03-E04.mkv", **tiny)
    make_video(show / "Specials" / "Show Name S00E01.mkv", **tiny)

    cover = make_image(root / "covers" / "cover.jpg", 64, 64, color="red")  # (outside the three libraries)
    album = music / "Band" / "First Album"
    for disc in (1, 2):
        for track in (1, 2):
            make_audio(album / f"CD{disc}" / f"{track:02d} - Song {disc}.{track}.flac", cover=cover, tags={
                "title": f"Song {disc}.{track}", "artist": "Band", "album_artist": "Band", "album": "First Album",
                "track": f"{track}/2", "disc": f"{disc}/2", "date": "2001-05-02", "genre": "Rock"},
                frequency=300 + 50 * disc + track)
    second = music / "Band" / "Second Album"
    make_image(second / "folder.jpg", 64, 64, color="green")
    for track in (1, 2, 3):
        make_audio(second / f"{track:02d} - Tune {track}.mp3", tags={
            "title": f"Tune {track}", "artist": "Band; Guest" if track == 2 else "Band", "album_artist": "Band",
            "album": "Second Album", "track": str(track), "date": "2005", "genre": "Pop"},
            frequency=500 + track)
    (second / "01 - Tune 1.lrc").write_text("[00:00.00]La la\n", encoding="utf-8")
    return {"movies": movies, "shows": shows, "music": music}
