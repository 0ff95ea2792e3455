"""Read music tags and embedded cover art with mutagen.

Every tag format (ID3, MP4 atoms, Vorbis comments, APEv2, ASF, RIFF INFO) is first flattened
into Vorbis-style lower-case keys with lists of strings, then one reader builds ``AudioTags``.
Bad values are skipped, never raised; only a file that is not readable audio raises.
"""

from __future__ import annotations

import base64
import os
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import mutagen
import mutagen.apev2
import mutagen.asf
import mutagen.flac
import mutagen.id3
import mutagen.mp3
import mutagen.mp4
import mutagen.oggopus
import mutagen.oggvorbis
import mutagen.wave

from server.media.names import split_list, split_names

TICKS_PER_SECOND = 10_000_000

# Extension -> mutagen class, to skip format sniffing (the slowest part for small files).
_LOADERS: dict[str, Any] = {
    ".mp3": mutagen.mp3.MP3,
    ".flac": mutagen.flac.FLAC,
    ".m4a": mutagen.mp4.MP4,
    ".m4b": mutagen.mp4.MP4,
    ".mp4": mutagen.mp4.MP4,
    ".alac": mutagen.mp4.MP4,
    ".ogg": mutagen.oggvorbis.OggVorbis,
    ".oga": mutagen.oggvorbis.OggVorbis,
    ".opus": mutagen.oggopus.OggOpus,
    ".wav": mutagen.wave.WAVE,
}

# Free-form tag names (ID3 TXXX, MP4 "----", ASF) -> Vorbis-style keys.
_FREEFORM_KEYS = {
    "musicbrainz artist id": "musicbrainz_artistid",
    "musicbrainz album id": "musicbrainz_albumid",
    "musicbrainz album artist id": "musicbrainz_albumartistid",
    "musicbrainz release group id": "musicbrainz_releasegroupid",
    "musicbrainz release track id": "musicbrainz_releasetrackid",
    "musicbrainz track id": "musicbrainz_trackid",
    "musicbrainz/artist id": "musicbrainz_artistid",
    "musicbrainz/album id": "musicbrainz_albumid",
    "musicbrainz/album artist id": "musicbrainz_albumartistid",
    "musicbrainz/release group id": "musicbrainz_releasegroupid",
    "musicbrainz/release track id": "musicbrainz_releasetrackid",
    "musicbrainz/track id": "musicbrainz_trackid",
    "album artist": "albumartist",
    "album_artist": "albumartist",
    "totaltracks": "tracktotal",
    "totaldiscs": "disctotal",
    "unsyncedlyrics": "lyrics",
    "unsynced lyrics": "lyrics",
    "description": "comment",
    "year": "date",
    "track": "tracknumber",
    "disc": "discnumber",
}
_ID3_FRAMES = {
    "TIT2": "title", "TPE1": "artist", "TPE2": "albumartist", "TALB": "album",
    "TRCK": "tracknumber", "TPOS": "discnumber", "TDRC": "date", "TDOR": "originaldate",
    "TCOM": "composer",
}
_MP4_ATOMS = {
    "\xa9nam": "title", "\xa9ART": "artist", "aART": "albumartist", "\xa9alb": "album",
    "\xa9day": "date", "\xa9gen": "genre", "\xa9wrt": "composer", "\xa9cmt": "comment",
    "\xa9lyr": "lyrics",
}
_ASF_ATTRIBUTES = {
    "title": "title", "author": "artist", "wm/albumtitle": "album", "wm/albumartist": "albumartist",
    "wm/tracknumber": "tracknumber", "wm/partofset": "discnumber", "wm/year": "date",
    "wm/genre": "genre", "wm/composer": "composer", "wm/lyrics": "lyrics",
    "wm/originalreleaseyear": "originaldate",
}
_RIFF_INFO = {
    b"INAM": "title", b"IART": "artist", b"IPRD": "album", b"ICRD": "date", b"IGNR": "genre",
    b"ITRK": "tracknumber", b"IPRT": "tracknumber", b"ICMT": "comment",
}

_NUMBER = re.compile(r"^\s*(\d+)\s*(?:(?:/|of)\s*(\d+))?")
_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_DECIBELS = re.compile(r"^\s*([-+]?\d+(?:[.,]\d+)?)")
_MP3_SAMPLES_PER_FRAME = 1152


class TagReadError(ValueError):
    """The file is missing, unreadable, or not an audio format mutagen understands."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(f"cannot read tags of {os.fspath(path)!r}: {reason}")
        self.path = os.fspath(path)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class AudioTags:
    """The tags and stream properties of one audio file."""

    title: str | None = None
    artists: tuple[str, ...] = ()
    album: str | None = None
    album_artists: tuple[str, ...] = ()
    track_number: int | None = None
    track_total: int | None = None
    disc_number: int | None = None
    disc_total: int | None = None
    date: str | None = None
    original_date: str | None = None
    year: int | None = None
    genres: tuple[str, ...] = ()
    composers: tuple[str, ...] = ()
    comment: str | None = None
    lyrics: str | None = None
    synced_lyrics: tuple[tuple[int, str], ...] = ()  # (milliseconds, line)
    musicbrainz_artist_id: str | None = None
    musicbrainz_album_id: str | None = None
    musicbrainz_album_artist_id: str | None = None
    musicbrainz_release_group_id: str | None = None
    musicbrainz_track_id: str | None = None  # release track id (Jellyfin's MusicBrainzTrack)
    musicbrainz_recording_id: str | None = None
    replaygain_track_gain: float | None = None  # dB
    replaygain_track_peak: float | None = None
    replaygain_album_gain: float | None = None
    replaygain_album_peak: float | None = None
    duration_seconds: float | None = None
    bitrate: int | None = None
    sample_rate: int | None = None
    channels: int | None = None
    bits_per_sample: int | None = None
    has_picture: bool = False

    @property
    def run_time_ticks(self) -> int | None:
        if self.duration_seconds is None:
            return None
        return round(self.duration_seconds * TICKS_PER_SECOND)


def _load(path: str) -> Any:
    if not os.path.isfile(path):
        raise TagReadError(path, "no such file")
    extension = os.path.splitext(path)[1].lower()
    loader = _LOADERS.get(extension)
    try:
        if loader is not None:
            try:
                return loader(path)
            except mutagen.MutagenError:
                pass  # Wrong extension or damaged tags: let mutagen sniff the format.
        audio = mutagen.File(path)
    except OSError as exc:
        raise TagReadError(path, exc.strerror or str(exc)) from exc
    except (mutagen.MutagenError, ValueError, IndexError, struct.error) as exc:
        audio = _mp3_without_tags(path) if extension == ".mp3" else None
        if audio is None:
            raise TagReadError(path, f"{type(exc).__name__}: {exc}".rstrip(": ")) from exc
    if audio is None:
        raise TagReadError(path, "not a recognised audio format")
    return audio


class _TaglessAudio:
    """Stream info of an MP3 whose ID3 tag is too damaged to parse."""

    def __init__(self, info: Any) -> None:
        self.info = info
        self.tags = None


def _mp3_without_tags(path: str) -> _TaglessAudio | None:
    try:
        with open(path, "rb") as fileobj:
            # Skip only the 10-byte ID3 header; its size field may be the broken part.
            offset = 10 if fileobj.read(3) == b"ID3" else 0
            fileobj.seek(0)
            return _TaglessAudio(mutagen.mp3.MPEGInfo(fileobj, offset))
    except (mutagen.MutagenError, OSError, struct.error, ValueError):
        return None


def read_audio_tags(path: str | os.PathLike[str], *, keep_whole_names: Iterable[str] = ()) -> AudioTags:
    """Read tags and stream properties of an audio file. Raises ``TagReadError`` if unreadable.

    ``keep_whole_names`` adds artist names that contain a delimiter but must not be split.
    """
    path_str = os.fspath(path)
    audio = _load(path_str)
    fields = _flatten(audio, path_str)
    info = audio.info
    keep = tuple(keep_whole_names)

    def first(*keys: str) -> str | None:
        for key in keys:
            for value in fields.get(key, ()):
                if value.strip():
                    return value.strip()
        return None

    def names(key: str, *, featuring: bool) -> tuple[str, ...]:
        return tuple(split_names(fields.get(key, ()), featuring=featuring, keep_whole=keep))

    track_number, track_total = _number_pair(first("tracknumber"))
    disc_number, disc_total = _number_pair(first("discnumber"))
    date = first("date")
    original_date = first("originaldate")
    artists = names("artists", featuring=False) or names("artist", featuring=True)
    album_artists = names("albumartists", featuring=False) or names("albumartist", featuring=True)
    return AudioTags(
        title=first("title"),
        artists=artists,
        album=first("album"),
        album_artists=album_artists,
        track_number=track_number,
        track_total=_positive_int(first("tracktotal")) or track_total,
        disc_number=disc_number,
        disc_total=_positive_int(first("disctotal")) or disc_total,
        date=date,
        original_date=original_date,
        year=_year(date) or _year(original_date),
        genres=tuple(split_list(fields.get("genre", ()))),
        composers=names("composer", featuring=False),
        comment=first("comment"),
        lyrics=first("lyrics"),
        synced_lyrics=_synced_lyrics(audio, info),
        musicbrainz_artist_id=_first_id(first("musicbrainz_artistid")),
        musicbrainz_album_id=_first_id(first("musicbrainz_albumid")),
        musicbrainz_album_artist_id=_first_id(first("musicbrainz_albumartistid")),
        musicbrainz_release_group_id=_first_id(first("musicbrainz_releasegroupid")),
        musicbrainz_track_id=_first_id(first("musicbrainz_releasetrackid")),
        musicbrainz_recording_id=_first_id(first("musicbrainz_trackid")),
        replaygain_track_gain=_decibels(first("replaygain_track_gain")),
        replaygain_track_peak=_decibels(first("replaygain_track_peak")),
        replaygain_album_gain=_decibels(first("replaygain_album_gain")),
        replaygain_album_peak=_decibels(first("replaygain_album_peak")),
        duration_seconds=_positive_float(getattr(info, "length", None)),
        bitrate=_bitrate(info, path_str),
        sample_rate=_positive_int(getattr(info, "sample_rate", None)) or _codec_rate(audio),
        channels=_positive_int(getattr(info, "channels", None)),
        bits_per_sample=_positive_int(getattr(info, "bits_per_sample", None)),
        has_picture=_picture(audio) is not None,
    )


def embedded_picture(path: str | os.PathLike[str]) -> tuple[bytes, str] | None:
    """The embedded cover (front cover preferred) as (image bytes, MIME type), or None.

    Reads ID3 APIC, FLAC pictures, MP4 covr, Vorbis METADATA_BLOCK_PICTURE, APEv2 and ASF
    covers. Raises ``TagReadError`` only when the file itself is unreadable.
    """
    return _picture(_load(os.fspath(path)))


# ----- flattening each tag format into {key: [values]} -----


def _add(fields: dict[str, list[str]], key: str, values: Iterable[Any]) -> None:
    key = _FREEFORM_KEYS.get(key, key)
    bucket = fields.setdefault(key, [])
    for value in values:
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        text = text.strip("\x00")
        if text.strip():
            bucket.append(text)


def _flatten(audio: Any, path: str) -> dict[str, list[str]]:
    fields: dict[str, list[str]] = {}
    tags = audio.tags
    try:
        if isinstance(tags, mutagen.id3.ID3):
            _flatten_id3(tags, fields)
        elif isinstance(tags, mutagen.mp4.MP4Tags):
            _flatten_mp4(tags, fields)
        elif isinstance(tags, mutagen.apev2.APEv2):
            for key, value in tags.items():
                if getattr(value, "kind", None) == mutagen.apev2.TEXT:
                    _add(fields, key.lower(), str(value).split("\x00"))
        elif isinstance(tags, mutagen.asf.ASFTags):
            for key, value in tags.items():
                lowered = key.lower()
                texts = [v.value for v in value if isinstance(v.value, str | int)]
                _add(fields, _ASF_ATTRIBUTES.get(lowered, lowered), texts)
        elif tags is not None and hasattr(tags, "items"):  # Vorbis comments (FLAC, Ogg)
            for key, value in tags.items():
                _add(fields, key.lower(), value if isinstance(value, list) else [value])
    except (ValueError, TypeError, UnicodeError, KeyError):
        pass  # A tag too broken to read yields what was collected so far.
    if not fields and isinstance(audio, mutagen.wave.WAVE):
        _flatten_riff_info(path, fields)
    return fields


def _flatten_id3(tags: mutagen.id3.ID3, fields: dict[str, list[str]]) -> None:
    for frame in tags.values():
        frame_id = frame.FrameID
        if frame_id in _ID3_FRAMES:
            _add(fields, _ID3_FRAMES[frame_id], frame.text)
        elif frame_id == "TCON":
            _add(fields, "genre", frame.genres)  # resolves "(17)" style ID3v1 references
        elif frame_id == "TXXX":
            _add(fields, frame.desc.lower(), frame.text)
        elif frame_id == "COMM" and not frame.desc.lower().startswith("itun"):
            _add(fields, "comment", frame.text)
        elif frame_id == "USLT":
            _add(fields, "lyrics", [frame.text])
        elif frame_id == "UFID" and frame.owner == "http://musicbrainz.org":
            _add(fields, "musicbrainz_trackid", [frame.data])
        elif frame_id == "RVA2" and frame.channel == 1:
            scope = "album" if frame.desc.lower() == "album" else "track"
            _add(fields, f"replaygain_{scope}_gain", [f"{frame.gain:.2f} dB"])
            _add(fields, f"replaygain_{scope}_peak", [f"{frame.peak:.6f}"])
        elif frame_id == "TORY":
            _add(fields, "originaldate", frame.text)


def _flatten_mp4(tags: mutagen.mp4.MP4Tags, fields: dict[str, list[str]]) -> None:
    for key, value in tags.items():
        if key in _MP4_ATOMS:
            _add(fields, _MP4_ATOMS[key], value)
        elif key in ("trkn", "disk") and value:
            number, total = value[0] if isinstance(value[0], tuple) else (value[0], 0)
            _add(fields, "tracknumber" if key == "trkn" else "discnumber",
                 [f"{number}/{total}" if total else f"{number}"])
        elif key == "gnre":
            _add(fields, "genre", [_id3v1_genre(v) for v in value if _id3v1_genre(v)])
        elif key.startswith("----:"):
            _add(fields, key.rsplit(":", 1)[-1].lower(), [bytes(v) for v in value])


def _id3v1_genre(number: Any) -> str:
    genres = mutagen.id3.TCON.GENRES
    index = int(number) - 1  # MP4 "gnre" counts from one
    return genres[index] if 0 <= index < len(genres) else ""


def _flatten_riff_info(path: str, fields: dict[str, list[str]]) -> None:
    """WAV files from many tools keep tags in a RIFF LIST/INFO chunk rather than ID3."""
    try:
        with open(path, "rb") as fileobj:
            header = fileobj.read(12)
            if header[:4] != b"RIFF" or header[8:12] != b"WAVE":
                return
            while chunk := fileobj.read(8):
                if len(chunk) < 8:
                    return
                chunk_id, size = chunk[:4], struct.unpack("<I", chunk[4:])[0]
                if chunk_id == b"LIST" and size >= 4 and size < 1 << 20:
                    body = fileobj.read(size)
                    if body[:4] == b"INFO":
                        _read_info_entries(body[4:], fields)
                        return
                else:
                    fileobj.seek(size + (size & 1), os.SEEK_CUR)
    except (OSError, struct.error):
        return


def _read_info_entries(body: bytes, fields: dict[str, list[str]]) -> None:
    offset = 0
    while offset + 8 <= len(body):
        entry_id = body[offset:offset + 4]
        size = struct.unpack("<I", body[offset + 4:offset + 8])[0]
        raw = body[offset + 8:offset + 8 + size]
        if entry_id in _RIFF_INFO:
            _add(fields, _RIFF_INFO[entry_id], [raw.split(b"\x00", 1)[0]])
        offset += 8 + size + (size & 1)


# ----- value parsing -----


def _number_pair(text: str | None) -> tuple[int | None, int | None]:
    match = _NUMBER.match(text) if text else None
    if not match:
        return None, None
    number = int(match.group(1)) or None
    total = int(match.group(2)) if match.group(2) else None
    return number, total or None


def _positive_int(value: Any) -> int | None:
    try:
        number = int(str(value).strip()) if value is not None else None
    except ValueError:
        return None
    return number if number and number > 0 else None


def _positive_float(value: Any) -> float | None:
    try:
        number = float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
    return number if number and number > 0 else None


def _year(date: str | None) -> int | None:
    match = _YEAR.search(date) if date else None
    return int(match.group(1)) if match else None


def _decibels(text: str | None) -> float | None:
    match = _DECIBELS.match(text) if text else None
    return float(match.group(1).replace(",", ".")) if match else None


def _first_id(text: str | None) -> str | None:
    """MusicBrainz ids may be a '/'- or ';'-separated list; the first one is used."""
    if not text:
        return None
    first = re.split(r"[/;]", text, maxsplit=1)[0].strip()
    return first or None


def _codec_rate(audio: Any) -> int | None:
    """Opus always decodes at 48 kHz; mutagen reports no rate for it."""
    return 48000 if isinstance(audio, mutagen.oggopus.OggOpus) else None


def _bitrate(info: Any, path: str) -> int | None:
    bitrate = _positive_int(getattr(info, "bitrate", None))
    if bitrate:
        return bitrate
    length = _positive_float(getattr(info, "length", None))
    if length:
        try:
            return int(os.path.getsize(path) * 8 / length)
        except OSError:
            return None
    return None


def _synced_lyrics(audio: Any, info: Any) -> tuple[tuple[int, str], ...]:
    try:
        return _read_sylt(audio, info)
    except (ValueError, TypeError, AttributeError):
        return ()  # a malformed SYLT frame counts as absent


def _read_sylt(audio: Any, info: Any) -> tuple[tuple[int, str], ...]:
    tags = audio.tags
    if not isinstance(tags, mutagen.id3.ID3):
        return ()
    sample_rate = getattr(info, "sample_rate", 0) or 0
    for frame in tags.getall("SYLT"):
        if frame.type not in (1, 0):  # 1 = lyrics; 0 = "other", used by some taggers
            continue
        lines: list[tuple[int, str]] = []
        for text, stamp in frame.text:
            if frame.format == 2:  # milliseconds
                milliseconds = int(stamp)
            elif frame.format == 1 and sample_rate:  # MPEG frames
                milliseconds = int(stamp * _MP3_SAMPLES_PER_FRAME * 1000 / sample_rate)
            else:
                continue
            lines.append((milliseconds, text.strip("\r\n")))
        if lines:
            return tuple(sorted(lines, key=lambda line: line[0]))
    return ()


# ----- pictures -----

_COVER_FRONT = 3


def _picture(audio: Any) -> tuple[bytes, str] | None:
    candidates: list[tuple[int, bytes, str | None]] = []  # (picture type, data, mime)
    tags = audio.tags
    try:
        if isinstance(tags, mutagen.id3.ID3):
            for frame in tags.getall("APIC"):
                if frame.mime != "-->":  # "-->" means the data is only a link
                    candidates.append((int(frame.type), frame.data, frame.mime))
        elif isinstance(tags, mutagen.mp4.MP4Tags):
            for cover in tags.get("covr", []):
                mime = {mutagen.mp4.MP4Cover.FORMAT_PNG: "image/png"}.get(
                    cover.imageformat, "image/jpeg")
                candidates.append((_COVER_FRONT, bytes(cover), mime))
        elif isinstance(tags, mutagen.apev2.APEv2):
            for key, value in tags.items():
                if key.lower().startswith("cover art") and value.kind == mutagen.apev2.BINARY:
                    data = bytes(value.value).split(b"\x00", 1)[-1]
                    kind = _COVER_FRONT if "front" in key.lower() else 0
                    candidates.append((kind, data, None))
        elif isinstance(tags, mutagen.asf.ASFTags):
            for value in tags.get("WM/Picture", []):
                parsed = _asf_picture(bytes(value.value))
                if parsed:
                    candidates.append(parsed)
        elif tags is not None and hasattr(tags, "get"):
            for encoded in tags.get("metadata_block_picture", []):
                pic = mutagen.flac.Picture(base64.b64decode(encoded))
                candidates.append((int(pic.type), pic.data, pic.mime))
        for pic in getattr(audio, "pictures", None) or []:  # native FLAC picture blocks
            candidates.append((int(pic.type), pic.data, pic.mime))
    except (ValueError, TypeError, struct.error, mutagen.MutagenError):
        pass  # A broken picture block is treated as absent.
    candidates = [c for c in candidates if c[1]]
    if not candidates:
        return None
    _kind, data, declared = min(candidates, key=lambda c: 0 if c[0] == _COVER_FRONT else 1)
    return data, _image_mime(data, declared)


def _asf_picture(raw: bytes) -> tuple[int, bytes, str | None] | None:
    """WM/Picture: type byte, data length, UTF-16 MIME and description, then the data."""
    if len(raw) < 5:
        return None
    kind, length = raw[0], struct.unpack("<I", raw[1:5])[0]
    offset, strings = 5, []
    for _ in range(2):
        end = offset
        while end + 1 < len(raw) and raw[end:end + 2] != b"\x00\x00":
            end += 2
        strings.append(raw[offset:end].decode("utf-16-le", "replace"))
        offset = end + 2
    return kind, raw[offset:offset + length], strings[0] or None


def _image_mime(data: bytes, declared: str | None) -> str:
    if data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "image/png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:2] == b"BM":
        return "image/bmp"
    if declared and "/" in declared:
        return declared.lower()
    return "image/jpeg" if declared and declared.lower() in ("jpg", "jpeg") else "application/octet-stream"
