"""read_audio_tags and embedded_picture on real files in every common tag format."""

from __future__ import annotations

import base64
import io
import shutil
from pathlib import Path

import mutagen.flac
import mutagen.id3
import mutagen.mp4
import mutagen.oggopus
import mutagen.oggvorbis
import pytest
from PIL import Image

from server.media.names import split_list, split_names
from server.media.tags import AudioTags, TagReadError, embedded_picture, read_audio_tags
from tests.media.conftest import AUDIO_SUFFIXES
from tests.mediagen import make_audio

MB_ARTIST = "66c662b6-6e2f-4930-8610-912e24c63ed1"
MB_ALBUM = "f5093c06-23e3-404f-aeaa-40f72885ee3a"
MB_ALBUM_ARTIST = "66c662b6-6e2f-4930-8610-912e24c63ed1"
MB_RELEASE_GROUP = "3be0e2e4-9a5a-3f8b-b1fc-8d1fda0f3d4c"
MB_RELEASE_TRACK = "0f2b3a5e-1a42-4c11-9d2e-4b8f3b3a3c77"
MB_RECORDING = "8f3a1ad9-9b4e-47a8-8c8f-0c3d3a9c0e21"


def copy(src: Path, tmp_path: Path) -> Path:
    return Path(shutil.copy(src, tmp_path / src.name))


def png_bytes(color: str = "green") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 6), color).save(out, "PNG")
    return out.getvalue()


@pytest.mark.parametrize("suffix", AUDIO_SUFFIXES)
def test_common_tags_in_every_format(songs: dict[str, Path], suffix: str) -> None:
    tags = read_audio_tags(songs[suffix])

    assert tags.title == "Highway Song"
    assert tags.artists == ("AC/DC", "Foo", "Bar")
    assert tags.album == "Loud Album"
    assert tags.album_artists == ("AC/DC",)
    assert (tags.track_number, tags.track_total) == (3, 10)
    assert (tags.disc_number, tags.disc_total) == (1, 2)
    assert tags.year == 2001 and tags.date == "2001-05-02"
    assert tags.genres == ("Rock", "Pop")
    assert tags.duration_seconds == pytest.approx(1.0, abs=0.08)
    assert tags.run_time_ticks == pytest.approx(10_000_000, abs=800_000)
    assert tags.bitrate and tags.bitrate > 0
    assert tags.sample_rate in (44100, 48000)
    assert tags.channels in (1, 2)


@pytest.mark.parametrize("suffix", [".mp3", ".flac", ".m4a"])
def test_embedded_cover(songs: dict[str, Path], suffix: str) -> None:
    picture = embedded_picture(songs[suffix])
    assert picture is not None
    data, mime = picture
    assert mime == "image/jpeg"
    with Image.open(io.BytesIO(data)) as img:
        assert img.size == (64, 64)
    assert read_audio_tags(songs[suffix]).has_picture is True


@pytest.mark.parametrize(("suffix", "kind"), [(".ogg", mutagen.oggvorbis.OggVorbis),
                                              (".opus", mutagen.oggopus.OggOpus)])
def test_ogg_cover_from_metadata_block_picture(songs: dict[str, Path], tmp_path: Path,
                                               suffix: str, kind: type) -> None:
    path = copy(songs[suffix], tmp_path)
    assert embedded_picture(path) is None
    picture = mutagen.flac.Picture()
    picture.type, picture.mime, picture.data = 3, "image/png", png_bytes()
    audio = kind(path)
    audio["METADATA_BLOCK_PICTURE"] = [base64.b64encode(picture.write()).decode("ascii")]
    audio.save()

    assert embedded_picture(path) == (png_bytes(), "image/png")
    assert read_audio_tags(path).has_picture is True


def test_front_cover_preferred_over_other_pictures(songs: dict[str, Path], tmp_path: Path) -> None:
    path = copy(songs[".mp3"], tmp_path)
    id3 = mutagen.id3.ID3(path)
    id3.delall("APIC")
    id3.add(mutagen.id3.APIC(encoding=3, mime="image/png", type=8, desc="artist", data=png_bytes("blue")))
    id3.add(mutagen.id3.APIC(encoding=3, mime="image/png", type=3, desc="front", data=png_bytes("red")))
    id3.save()
    assert embedded_picture(path) == (png_bytes("red"), "image/png")


def test_mp3_musicbrainz_replaygain_lyrics_and_synced_lyrics(songs: dict[str, Path],
                                                             tmp_path: Path) -> None:
    path = copy(songs[".mp3"], tmp_path)
    id3 = mutagen.id3.ID3(path)
    for desc, value in (("MusicBrainz Artist Id", MB_ARTIST), ("MusicBrainz Album Id", MB_ALBUM),
                        ("MusicBrainz Album Artist Id", MB_ALBUM_ARTIST),
                        ("MusicBrainz Release Group Id", MB_RELEASE_GROUP),
                        ("MusicBrainz Release Track Id", MB_RELEASE_TRACK),
                        ("REPLAYGAIN_TRACK_GAIN", "-7.25 dB"), ("REPLAYGAIN_TRACK_PEAK", "0.988"),
                        ("replaygain_album_gain", "-6.5 dB"), ("replaygain_album_peak", "1.0")):
        id3.add(mutagen.id3.TXXX(encoding=3, desc=desc, text=[value]))
    id3.add(mutagen.id3.UFID(owner="http://musicbrainz.org", data=MB_RECORDING.encode()))
    id3.add(mutagen.id3.TPE1(encoding=3, text=["Angus", "Malcolm"]))
    id3.add(mutagen.id3.TCOM(encoding=3, text=["Young/Scott"]))
    id3.add(mutagen.id3.COMM(encoding=3, lang="eng", desc="", text=["Recorded live"]))
    id3.add(mutagen.id3.USLT(encoding=3, lang="eng", desc="", text="Line one\nLine two"))
    id3.add(mutagen.id3.SYLT(encoding=3, lang="eng", format=2, type=1, desc="",
                             text=[("Line two", 2500), ("Line one", 1000)]))
    id3.save(v2_version=4)

    tags = read_audio_tags(path)
    assert tags.artists == ("Angus", "Malcolm")
    assert tags.composers == ("Young", "Scott")
    assert tags.comment == "Recorded live"
    assert tags.lyrics == "Line one\nLine two"
    assert tags.synced_lyrics == ((1000, "Line one"), (2500, "Line two"))
    assert (tags.musicbrainz_artist_id, tags.musicbrainz_album_id) == (MB_ARTIST, MB_ALBUM)
    assert tags.musicbrainz_album_artist_id == MB_ALBUM_ARTIST
    assert tags.musicbrainz_release_group_id == MB_RELEASE_GROUP
    assert tags.musicbrainz_track_id == MB_RELEASE_TRACK
    assert tags.musicbrainz_recording_id == MB_RECORDING
    assert (tags.replaygain_track_gain, tags.replaygain_track_peak) == (-7.25, 0.988)
    assert (tags.replaygain_album_gain, tags.replaygain_album_peak) == (-6.5, 1.0)


def test_flac_vorbis_comments(songs: dict[str, Path], tmp_path: Path) -> None:
    path = copy(songs[".flac"], tmp_path)
    flac = mutagen.flac.FLAC(path)
    flac["ARTISTS"] = ["AC/DC", "Guest Singer"]
    flac["TRACKNUMBER"] = "4"
    flac["TRACKTOTAL"] = "12"
    flac["COMPOSER"] = ["Angus Young", "Malcolm Young"]
    flac["UNSYNCEDLYRICS"] = "Plain lyrics"
    flac["MUSICBRAINZ_ALBUMID"] = f"{MB_ALBUM}/{MB_RELEASE_GROUP}"
    flac["MUSICBRAINZ_RELEASETRACKID"] = MB_RELEASE_TRACK
    flac["MUSICBRAINZ_TRACKID"] = MB_RECORDING
    flac["REPLAYGAIN_TRACK_GAIN"] = "+1.50 dB"
    flac.save()

    tags = read_audio_tags(path)
    assert tags.artists == ("AC/DC", "Guest Singer")  # ARTISTS wins over the joined ARTIST
    assert (tags.track_number, tags.track_total) == (4, 12)
    assert tags.composers == ("Angus Young", "Malcolm Young")
    assert tags.lyrics == "Plain lyrics"
    assert tags.musicbrainz_album_id == MB_ALBUM  # the first of several ids
    assert tags.musicbrainz_track_id == MB_RELEASE_TRACK
    assert tags.musicbrainz_recording_id == MB_RECORDING
    assert tags.replaygain_track_gain == 1.5
    assert tags.bits_per_sample == 16


def test_m4a_freeform_atoms(songs: dict[str, Path], tmp_path: Path) -> None:
    path = copy(songs[".m4a"], tmp_path)
    mp4 = mutagen.mp4.MP4(path)
    prefix = "----:com.apple.iTunes:"
    mp4[prefix + "MusicBrainz Artist Id"] = [mutagen.mp4.MP4FreeForm(MB_ARTIST.encode())]
    mp4[prefix + "MusicBrainz Release Group Id"] = [mutagen.mp4.MP4FreeForm(MB_RELEASE_GROUP.encode())]
    mp4[prefix + "MusicBrainz Track Id"] = [mutagen.mp4.MP4FreeForm(MB_RECORDING.encode())]
    mp4[prefix + "replaygain_album_gain"] = [mutagen.mp4.MP4FreeForm(b"-3.10 dB")]
    mp4["\xa9lyr"] = ["Sung words"]
    mp4["\xa9wrt"] = ["Bon Scott"]
    mp4.save()

    tags = read_audio_tags(path)
    assert tags.musicbrainz_artist_id == MB_ARTIST
    assert tags.musicbrainz_release_group_id == MB_RELEASE_GROUP
    assert tags.musicbrainz_recording_id == MB_RECORDING
    assert tags.replaygain_album_gain == -3.1
    assert tags.lyrics == "Sung words"
    assert tags.composers == ("Bon Scott",)


def test_garbage_values_are_ignored(songs: dict[str, Path], tmp_path: Path) -> None:
    path = copy(songs[".mp3"], tmp_path)
    id3 = mutagen.id3.ID3(path)
    id3.add(mutagen.id3.TRCK(encoding=3, text=["abc"]))
    id3.add(mutagen.id3.TPOS(encoding=3, text=["0/0"]))
    id3.add(mutagen.id3.TXXX(encoding=3, desc="REPLAYGAIN_TRACK_GAIN", text=["loud"]))
    id3.add(mutagen.id3.TXXX(encoding=3, desc="MusicBrainz Album Id", text=["   "]))
    id3.add(mutagen.id3.TCON(encoding=3, text=["(17)"]))
    id3.save()

    tags = read_audio_tags(path)
    assert tags.title == "Highway Song"
    assert (tags.track_number, tags.track_total) == (None, None)
    assert (tags.disc_number, tags.disc_total) == (None, None)
    assert tags.replaygain_track_gain is None
    assert tags.musicbrainz_album_id is None
    assert tags.genres == ("Rock",)  # ID3v1 genre reference 17


def test_damaged_id3_header_still_gives_audio_properties(songs: dict[str, Path],
                                                         tmp_path: Path) -> None:
    data = songs[".mp3"].read_bytes()
    broken = tmp_path / "broken.mp3"
    broken.write_bytes(b"ID3\x04\x00\x00\x7f\x7f\x7f\x7f" + data[10:])  # tag size beyond the file
    tags = read_audio_tags(broken)
    assert tags.title is None
    assert tags.duration_seconds == pytest.approx(1.0, abs=0.08)
    assert embedded_picture(broken) is None


def test_untagged_file(tmp_path: Path) -> None:
    path = make_audio(tmp_path / "plain.mp3")
    tags = read_audio_tags(path)
    assert tags == AudioTags(
        duration_seconds=tags.duration_seconds, bitrate=tags.bitrate,
        sample_rate=44100, channels=1)
    assert tags.duration_seconds and tags.bitrate
    assert embedded_picture(path) is None


def test_wav_riff_info_tags(tmp_path: Path) -> None:
    path = make_audio(tmp_path / "take.wav", tags={"title": "Take One", "artist": "Band"})
    tags = read_audio_tags(path)
    assert (tags.title, tags.artists, tags.bits_per_sample) == ("Take One", ("Band",), 16)


@pytest.mark.parametrize("content", [b"", b"definitely not audio " * 50])
def test_unreadable_files_raise(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.mp3"
    path.write_bytes(content)
    with pytest.raises(TagReadError):
        read_audio_tags(path)
    with pytest.raises(ValueError):
        embedded_picture(path)


def test_missing_and_video_files_raise(tmp_path: Path, movie_mkv: Path) -> None:
    with pytest.raises(TagReadError, match="no such file"):
        read_audio_tags(tmp_path / "gone.flac")
    with pytest.raises(TagReadError):
        read_audio_tags(movie_mkv)


def test_name_splitting_rules() -> None:
    assert split_names(["AC/DC feat. Someone"]) == ["AC/DC", "Someone"]
    assert split_names(["Simon & Garfunkel"]) == ["Simon & Garfunkel"]
    assert split_names(["A / B", "b"]) == ["A", "B"]
    assert split_names(["Odd/Name; X"], keep_whole=["Odd/Name"]) == ["Odd/Name", "X"]
    assert split_names(["Artist feat. Guest"], featuring=False) == ["Artist feat. Guest"]
    assert split_list(["Rock; Pop"]) == ["Rock", "Pop"]
    assert split_list(["Rock, Pop"]) == ["Rock", "Pop"]
    assert split_list(["Rock, Pop/Indie"]) == ["Rock, Pop", "Indie"]
