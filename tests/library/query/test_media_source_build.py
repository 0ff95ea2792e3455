"""media_source_for builds each source as a copy of a constant file source with its own values
assigned (cheaper than msgspec's keyword matching). These pin what a source says for the rows
that take the less common branches, and that no two sources share a mutable value."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from server.library.catalog.media_sources import media_source_for, media_sources_for, source_name
from server.wire import models as w


class Row:
    """The attributes media_source_for reads (an ItemRow or a select(items) row has them all)."""

    def __init__(self, **kw: Any) -> None:
        values: dict[str, Any] = {"id": "a" * 32, "path": "/media/movies/Film (2001)/Film.mkv", "name": "Film",
                                  "container": "mkv", "size": 123, "file_size": 456, "file_mtime": 1.5,
                                  "date_modified": None, "run_time_ticks": 6_000_000_000, "video_type": "VideoFile",
                                  "media_type": "Video", "bitrate": 8_000_000, "media_streams_json": "[]"}
        values.update(kw)
        self.__dict__.update(values)


def _streams(*specs: dict[str, Any]) -> str:
    return json.dumps(list(specs))


CONSTANT = {"Protocol": "File", "Type": "Default", "IsRemote": False, "ReadAtNativeFramerate": False,
            "IgnoreDts": False, "IgnoreIndex": False, "GenPtsInput": False, "SupportsTranscoding": True,
            "IsInfiniteStream": False, "UseMostCompatibleTranscodingProfile": False, "RequiresOpening": False,
            "RequiresClosing": False, "RequiresLooping": False, "SupportsProbing": True,
            "TranscodingSubProtocol": "http", "HasSegments": False, "MediaAttachments": [], "Formats": [],
            "RequiredHttpHeaders": {}}


def _wire(source: w.MediaSourceInfo) -> dict[str, Any]:
    out: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(source))
    return out


def test_a_file_source_says_what_every_file_source_says() -> None:
    got = _wire(media_source_for(Row()))
    assert {k: got[k] for k in CONSTANT} == CONSTANT
    assert got["Id"] == "a" * 32 and got["Path"] == "/media/movies/Film (2001)/Film.mkv"
    assert (got["Container"], got["Size"], got["Name"], got["RunTimeTicks"], got["Bitrate"]) == \
        ("mkv", 123, "Film", 6_000_000_000, 8_000_000)
    assert got["VideoType"] == "VideoFile" and got["SupportsDirectPlay"] is True and got["SupportsDirectStream"] is True
    assert got["MediaStreams"] == [] and "DefaultAudioStreamIndex" not in got
    assert len(got["ETag"]) == 32


@pytest.mark.parametrize("video_type", ["Dvd", "BluRay", "Iso"])
def test_a_disc_is_not_played_or_streamed_directly(video_type: str) -> None:
    got = _wire(media_source_for(Row(video_type=video_type)))
    assert got["SupportsDirectPlay"] is False and got["SupportsDirectStream"] is False
    assert got["SupportsTranscoding"] is True and got["VideoType"] == video_type


def test_size_falls_back_to_the_file_size_and_audio_has_no_video_type() -> None:
    got = _wire(media_source_for(Row(size=None, media_type="Audio", video_type=None)))
    assert got["Size"] == 456 and "VideoType" not in got


@pytest.mark.parametrize(("streams", "audio", "subtitle"), [
    # the default audio stream, else the first; a forced subtitle before a default one
    (_streams({"Index": 0, "Type": "Video"}, {"Index": 1, "Type": "Audio"},
              {"Index": 2, "Type": "Audio", "IsDefault": True}), 2, None),
    (_streams({"Index": 0, "Type": "Video"}, {"Index": 3, "Type": "Audio"}, {"Index": 4, "Type": "Audio"}), 3, None),
    (_streams({"Index": 1, "Type": "Audio"}, {"Index": 5, "Type": "Subtitle", "IsDefault": True},
              {"Index": 6, "Type": "Subtitle", "IsForced": True}), 1, 6),
    (_streams({"Index": 5, "Type": "Subtitle", "IsDefault": True},
              {"Index": 6, "Type": "Subtitle", "IsDefault": True}), None, 5),
    (_streams({"Index": 5, "Type": "Subtitle"}), None, None),
    ("not json", None, None),
])
def test_default_stream_indexes(streams: str, audio: int | None, subtitle: int | None) -> None:
    source = media_source_for(Row(media_streams_json=streams))
    assert (source.DefaultAudioStreamIndex, source.DefaultSubtitleStreamIndex) == (audio, subtitle)


@pytest.mark.parametrize(("path", "name"), [
    ("/media/a/Film.mkv", "Film"), ("/media/a/Film.2001.1080p.mkv", "Film.2001.1080p"),
    ("/media/a/.hidden", ".hidden"), ("/media/a/..x", "..x"), ("/media/a/...", "..."), ("/media/a/x.", "x"),
    ("/media/b.c/d", "d"), ("relative.mkv", "relative"), ("/media/a/", ""), ("/m/..a.b", "..a"),
    (None, "Film"), ("", "Film"),
])
def test_the_source_name_is_the_file_name_without_its_extension(path: str | None, name: str) -> None:
    assert source_name(Row(path=path)) == name


def test_sources_share_no_mutable_value() -> None:
    one, two = media_source_for(Row(id="1" * 32)), media_source_for(Row(id="2" * 32))
    assert one.Formats is not two.Formats and one.MediaAttachments is not two.MediaAttachments
    assert one.RequiredHttpHeaders is not two.RequiredHttpHeaders
    assert one.Formats is not None and one.RequiredHttpHeaders is not None
    one.Formats.append("x")
    one.RequiredHttpHeaders["X"] = "y"
    one.SupportsDirectPlay = False  # (what the playback decision does to a source)
    three = media_source_for(Row(id="3" * 32))
    assert two.Formats == [] and three.Formats == [] and three.RequiredHttpHeaders == {}
    assert three.SupportsDirectPlay is True and two.SupportsDirectPlay is True


def test_versions_follow_the_item_sorted_by_path() -> None:
    sources = media_sources_for(Row(), [Row(id="c" * 32, path="/m/z.mkv"), Row(id="b" * 32, path="/m/b.mkv")])
    assert [s.Id for s in sources] == ["a" * 32, "b" * 32, "c" * 32]
