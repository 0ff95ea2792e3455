"""Playback over HTTP against a real server with a scanned, ffmpeg-generated library:
PlaybackInfo decisions for three device profiles, byte-exact Range replies, progressive
remux/transcode streams, universal audio, Download/File, play-state reports and versions."""

from __future__ import annotations

import io
import os
import subprocess
import time
from pathlib import Path

import av
import msgspec
import pytest

from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.library_helpers import add_library_and_scan
from tests.mediagen import make_audio, make_video
from tests.playback.device_profiles import (
    audio_player_profile,
    browser_profile,
    permissive_profile,
    restrictive_tv_profile,
)

TICKS = 10_000_000


@pytest.fixture(scope="module")
def media(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("playback-media")
    movies, music = root / "Movies", root / "Music"
    files = {
        "mp4": make_video(movies / "Direct Movie (2001)" / "Direct Movie (2001).mp4", seconds=4),
        "mkv": make_video(movies / "Remux Movie (2002)" / "Remux Movie (2002).mkv", seconds=4),
        "mpeg4": make_video(movies / "Old Movie (1990)" / "Old Movie (1990).mkv", seconds=4, vcodec="mpeg4"),
        # long enough that its transcode outlasts the first bytes (test_no_ffmpeg_left_behind)
        "long": make_video(movies / "Long Movie (1995)" / "Long Movie (1995).mkv", seconds=60,
                           width=640, height=360, vcodec="mpeg4", acodec=None),
        "mp3": make_audio(music / "Artist" / "Album" / "01 - Song.mp3", seconds=3,
                          tags={"title": "Song", "artist": "Artist", "album": "Album", "track": "1"}),
        "flac": make_audio(music / "Artist" / "Album" / "02 - Lossless.flac", seconds=3,
                           tags={"title": "Lossless", "artist": "Artist", "album": "Album", "track": "2"}),
    }
    files["movies"], files["music"] = movies, music
    return files


@pytest.fixture(scope="module")
def live(tmp_path_factory, media) -> LiveServer:
    server = start_server(tmp_path_factory.mktemp("playback-server") / "data")
    complete_wizard(server)
    add_library_and_scan(server, "Movies", "movies", [media["movies"]])
    add_library_and_scan(server, "Music", "music", [media["music"]])
    yield server
    stop_server(server)


def _item(live: LiveServer, name: str) -> dict:
    with live.admin() as c:
        found = c.get("/Items", params={"recursive": "true", "searchTerm": name,
                                        "includeItemTypes": "Movie,Audio"}).json()["Items"]
    match = [i for i in found if i["Name"] == name]
    assert match, f"{name} was not scanned: {[i['Name'] for i in found]}"
    return match[0]


def _info(live: LiveServer, item_id: str, profile, **body) -> dict:
    with live.admin() as c:
        payload = {"DeviceProfile": msgspec.to_builtins(profile) if profile else None, **body}
        r = c.post(f"/Items/{item_id}/PlaybackInfo", params={"userId": live.admin_id}, json=payload)
    assert r.status_code == 200, r.text
    return r.json()


# -- decisions -----------------------------------------------------------------------------------


def test_three_profiles_three_decisions(live):
    """One file (H.264 Constrained Baseline + AAC in MKV), three clients."""
    item = _item(live, "Remux Movie")["Id"]
    kodi = _info(live, item, permissive_profile())
    source = kodi["MediaSources"][0]
    assert source["SupportsDirectPlay"] is True and "TranscodingUrl" not in source
    assert source["Container"] == "mkv"
    assert kodi["PlaySessionId"] and len(kodi["PlaySessionId"]) == 32
    assert {s["Type"] for s in source["MediaStreams"]} >= {"Video", "Audio"}
    assert source["DefaultAudioStreamIndex"] == 1

    browser = _info(live, item, browser_profile())["MediaSources"][0]  # no MKV in a browser: remux
    # As Jellyfin 10.10 does, a remux goes out as HLS with stream copy; only the container was wrong.
    assert browser["SupportsDirectPlay"] is False and browser["SupportsTranscoding"] is True
    assert browser["TranscodingUrl"].endswith("TranscodeReasons=ContainerNotSupported")
    assert browser["TranscodingSubProtocol"] == "hls" and "/master.m3u8?" in browser["TranscodingUrl"]
    assert "TranscodeReasons=ContainerNotSupported" in browser["TranscodingUrl"]
    assert "VideoCodec=h264" in browser["TranscodingUrl"]

    tv = _info(live, item, restrictive_tv_profile())["MediaSources"][0]  # main/high only: transcode
    assert tv["SupportsDirectPlay"] is False and tv["SupportsDirectStream"] is False
    assert tv["SupportsTranscoding"] is True
    assert "VideoProfileNotSupported" in tv["TranscodingUrl"]
    assert "PlaySessionId=" in tv["TranscodingUrl"] and "api_key=" in tv["TranscodingUrl"]
    old = _info(live, _item(live, "Old Movie")["Id"], restrictive_tv_profile())["MediaSources"][0]
    assert "VideoCodecNotSupported" in old["TranscodingUrl"]

    # The client may forbid direct play.
    forced = _info(live, _item(live, "Direct Movie")["Id"], browser_profile(), EnableDirectPlay=False)
    assert forced["MediaSources"][0]["SupportsDirectPlay"] is False
    assert _info(live, _item(live, "Direct Movie")["Id"], browser_profile())["MediaSources"][0]["SupportsDirectPlay"]

    # Music: mp3 direct, flac through HLS for a Finamp-like player.
    assert _info(live, _item(live, "Song")["Id"], audio_player_profile())["MediaSources"][0]["SupportsDirectPlay"]
    flac = _info(live, _item(live, "Lossless")["Id"], audio_player_profile())["MediaSources"][0]
    assert flac["SupportsDirectPlay"] is False and flac["TranscodingUrl"].startswith("/audio/")


def test_playback_info_errors(live):
    with live.admin() as c:
        assert c.post("/Items/0123456789abcdef0123456789abcdef/PlaybackInfo", json={}).status_code == 404
        folder = c.get("/Items", params={"includeItemTypes": "CollectionFolder"}).json()["Items"]
        if folder:
            assert c.post(f"/Items/{folder[0]['Id']}/PlaybackInfo", json={}).status_code in (400, 404)
        item = _item(live, "Direct Movie")["Id"]
        bad = c.post(f"/Items/{item}/PlaybackInfo", json={"MaxStreamingBitrate": -5})
        assert bad.status_code == 400 and bad.headers["content-type"].startswith("application/problem+json")
        assert c.get(f"/Items/{item}/PlaybackInfo").status_code == 200
        missing = c.post(f"/Items/{item}/PlaybackInfo", json={"MediaSourceId": "0" * 31 + "1"})
        assert missing.status_code == 404
    with live.client() as anonymous:
        assert anonymous.post(f"/Items/{item}/PlaybackInfo", json={}).status_code == 401


# -- bytes ---------------------------------------------------------------------------------------


def test_range_replies_are_byte_exact(live, media):
    item = _item(live, "Direct Movie")["Id"]
    data = media["mp4"].read_bytes()
    size = len(data)
    with live.client() as anonymous:  # the stream routes are anonymous, as in Jellyfin
        whole = anonymous.get(f"/Videos/{item}/stream", params={"static": "true"})
        assert whole.status_code == 200 and whole.content == data
        assert whole.headers["accept-ranges"] == "bytes" and whole.headers["content-type"] == "video/mp4"
        etag = whole.headers["etag"]
        part = anonymous.get(f"/Videos/{item}/stream.mp4", params={"Static": "True"},
                             headers={"Range": "bytes=100-1099"})
        assert part.status_code == 206 and part.content == data[100:1100]
        assert part.headers["content-range"] == f"bytes 100-1099/{size}"
        tail = anonymous.get(f"/Videos/{item}/stream", params={"static": "true"}, headers={"Range": "bytes=-500"})
        assert tail.status_code == 206 and tail.content == data[-500:]
        open_end = anonymous.get(f"/Videos/{item}/stream", params={"static": "true"},
                                 headers={"Range": f"bytes={size - 10}-"})
        assert open_end.content == data[-10:]
        past = anonymous.get(f"/Videos/{item}/stream", params={"static": "true"},
                             headers={"Range": f"bytes={size + 10}-"})
        assert past.status_code == 416 and past.headers["content-range"] == f"bytes */{size}"
        head = anonymous.head(f"/Videos/{item}/stream", params={"static": "true"}, headers={"Range": "bytes=0-9"})
        assert head.status_code == 206 and head.content == b"" and head.headers["content-length"] == "10"
        cached = anonymous.get(f"/Videos/{item}/stream", params={"static": "true"}, headers={"If-None-Match": etag})
        assert cached.status_code == 304
        assert anonymous.get("/Videos/0123456789abcdef0123456789abcdef/stream").status_code == 404


def test_kept_source_row_follows_changes(live, media, tmp_path):
    """A stream's row is kept between requests while the database is unchanged; a moved file (a
    rescan writing the new path) is streamed from its new place at once, a vanished one is 404."""
    from server.db.tables import Item

    item = _item(live, "Direct Movie")["Id"]
    original = str(media["mp4"])
    moved = tmp_path / "moved.mp4"
    moved.write_bytes(media["mp4"].read_bytes()[:1000] + b"moved")

    def set_path(path: str) -> None:
        live.ctx.db.write_sync(lambda s: setattr(s.get(Item, item), "path", path))

    with live.client() as anonymous:
        url = f"/Videos/{item}/stream"
        assert anonymous.get(url, params={"static": "true"}).content == media["mp4"].read_bytes()
        set_path(str(moved))
        try:
            assert anonymous.get(url, params={"static": "true"}).content.endswith(b"moved")
            moved.unlink()
            assert anonymous.get(url, params={"static": "true"}).status_code == 404
        finally:
            set_path(original)
        assert anonymous.get(url, params={"static": "true"}).content == media["mp4"].read_bytes()


def test_progressive_remux_and_audio_transcode(live, tmp_path):
    item = _item(live, "Remux Movie")["Id"]
    with live.client() as anonymous:
        r = anonymous.get(f"/Videos/{item}/stream.ts", params={"videoCodec": "h264", "audioCodec": "aac"})
        assert r.status_code == 200 and r.headers["content-type"] == "video/mp2t"
        assert r.content[:1] == b"\x47"
        with av.open(io.BytesIO(r.content), format="mpegts") as container:
            assert container.streams.video[0].codec_context.name == "h264"
            assert abs(float(container.duration or 0) / 1e6 - 4) < 1
        song = _item(live, "Lossless")["Id"]
        r = anonymous.get(f"/Audio/{song}/stream.mp3", params={"audioBitRate": "128000"})
        assert r.status_code == 200 and r.headers["content-type"] == "audio/mpeg"
        with av.open(io.BytesIO(r.content), format="mp3") as container:
            assert container.streams.audio[0].codec_context.name in ("mp3", "mp3float")
        assert anonymous.get(f"/Audio/{song}/stream.xyz", params={"audioCodec": "xyz"}).status_code == 400


def test_universal_audio(live, media):
    song = _item(live, "Song")["Id"]
    flac = _item(live, "Lossless")["Id"]
    with live.admin() as c:
        direct = c.get(f"/Audio/{song}/universal", params={"container": "mp3,aac", "maxStreamingBitrate": "320000"})
        assert direct.status_code == 200 and direct.content == media["mp3"].read_bytes()
        assert c.head(f"/Audio/{song}/universal", params={"container": "mp3"}).status_code == 200
        hls = c.get(f"/Audio/{flac}/universal", params={"container": "mp3", "transcodingProtocol": "hls",
                                                        "transcodingContainer": "ts", "audioCodec": "aac"},
                    follow_redirects=False)
        assert hls.status_code == 302 and f"/audio/{flac}/main.m3u8?" in hls.headers["location"]
        progressive = c.get(f"/Audio/{flac}/universal", params={"container": "mp3", "transcodingContainer": "mp3",
                                                                "audioCodec": "mp3"})
        assert progressive.status_code == 200 and progressive.headers["content-type"] == "audio/mpeg"
        assert len(progressive.content) > 1000
    with live.client() as anonymous:
        assert anonymous.get(f"/Audio/{song}/universal").status_code == 401


def test_download_and_file(live, media):
    item = _item(live, "Direct Movie")["Id"]
    with live.admin() as c:
        r = c.get(f"/Items/{item}/Download")
        assert r.status_code == 200 and r.content == media["mp4"].read_bytes()
        assert "attachment" in r.headers["content-disposition"]
        assert c.get(f"/Items/{item}/File", headers={"Range": "bytes=0-3"}).content == media["mp4"].read_bytes()[:4]
        assert c.get("/Items/0123456789abcdef0123456789abcdef/Download").status_code == 404
        user = c.post("/Users/New", json={"Name": "nodownload", "Password": "pw"}).json()
        policy = {**user["Policy"], "EnableContentDownloading": False}
        assert c.post(f"/Users/{user['Id']}/Policy", json=policy).status_code == 204
    token = live.client(device="nd").post("/Users/AuthenticateByName",
                                          json={"Username": "nodownload", "Pw": "pw"}).json()["AccessToken"]
    with live.client(token, "nd") as viewer:
        assert viewer.get(f"/Items/{item}/Download").status_code == 403


# -- play state ----------------------------------------------------------------------------------


def test_play_state_reports(live):
    item = _item(live, "Remux Movie")
    with live.admin() as c:
        # Short clips count as watched when stopped (MinResumeDurationSeconds); allow resume here.
        config = c.get("/System/Configuration").json()
        config["MinResumeDurationSeconds"] = 0
        assert c.post("/System/Configuration", json=config).status_code == 204
        before = c.get(f"/Items/{item['Id']}", params={"userId": live.admin_id}).json()["UserData"]
        assert c.post("/Sessions/Playing", json={"ItemId": item["Id"], "PositionTicks": 0,
                                                 "PlaySessionId": "p1", "PlayMethod": "DirectPlay"}).status_code == 204
        sessions = c.get("/Sessions").json()
        mine = next(s for s in sessions if s.get("NowPlayingItem"))
        assert mine["NowPlayingItem"]["Id"] == item["Id"] and mine["PlayState"]["PlayMethod"] == "DirectPlay"
        assert c.post("/Sessions/Playing/Progress", json={"ItemId": item["Id"], "PositionTicks": 2 * TICKS,
                                                          "IsPaused": True}).status_code == 204
        assert next(s for s in c.get("/Sessions").json() if s["Id"] == mine["Id"])["PlayState"]["IsPaused"] is True
        # The position is saved as it goes, before any stop (a crashed client keeps its place); the
        # next report within 10 s is not written.
        playing = c.get(f"/Items/{item['Id']}", params={"userId": live.admin_id}).json()["UserData"]
        assert playing["PlaybackPositionTicks"] == 2 * TICKS
        assert c.post("/Sessions/Playing/Progress", json={"ItemId": item["Id"], "PositionTicks": 3 * TICKS,
                                                          "IsPaused": True}).status_code == 204
        playing = c.get(f"/Items/{item['Id']}", params={"userId": live.admin_id}).json()["UserData"]
        assert playing["PlaybackPositionTicks"] == 2 * TICKS
        assert c.post("/Sessions/Playing/Ping", params={"playSessionId": "p1"}).status_code == 204
        assert c.post("/Sessions/Playing/Stopped", json={"ItemId": item["Id"],
                                                         "PositionTicks": 2 * TICKS}).status_code == 204
        after = c.get(f"/Items/{item['Id']}", params={"userId": live.admin_id}).json()["UserData"]
        assert after["PlaybackPositionTicks"] == 2 * TICKS and after["Played"] is False
        assert after["PlayCount"] == before.get("PlayCount", 0) + 1
        resume = c.get("/UserItems/Resume", params={"userId": live.admin_id}).json()["Items"]
        assert item["Id"] in [i["Id"] for i in resume]
        assert "NowPlayingItem" not in next(s for s in c.get("/Sessions").json() if s["Id"] == mine["Id"])

        # Played to the end: watched, no resume point. The old /PlayingItems routes work too.
        assert c.post(f"/PlayingItems/{item['Id']}", params={"playSessionId": "p2"}).status_code == 204
        assert c.delete(f"/PlayingItems/{item['Id']}", params={"positionTicks": 4 * TICKS}).status_code == 204
        done = c.get(f"/Items/{item['Id']}", params={"userId": live.admin_id}).json()["UserData"]
        assert done["Played"] is True and done["PlaybackPositionTicks"] == 0
        assert c.post("/Sessions/Playing", json={}).status_code == 400
        assert c.post("/Sessions/Playing", json={"ItemId": "0123456789abcdef0123456789abcdef"}).status_code == 404


def test_merge_and_split_versions(live):
    a, b = _item(live, "Direct Movie")["Id"], _item(live, "Remux Movie")["Id"]
    with live.admin() as c:
        assert c.post("/Videos/MergeVersions", params={"ids": a}).status_code == 400
        assert c.post("/Videos/MergeVersions", params={"ids": f"{a},{b}"}).status_code == 204
        sources = _info(live, a, None)["MediaSources"]
        assert [s["Id"] for s in sources] == [a, b]
        names = [i["Name"] for i in c.get("/Items", params={"recursive": "true",
                                                            "includeItemTypes": "Movie"}).json()["Items"]]
        assert "Remux Movie" not in names  # a version is not listed on its own
        one = c.get(f"/Videos/{a}/stream", params={"static": "true", "mediaSourceId": b})
        assert one.status_code == 200 and one.headers["content-type"] in ("video/x-matroska", "video/webm")
        assert c.delete(f"/Videos/{a}/AlternateSources").status_code == 204
        assert [s["Id"] for s in _info(live, a, None)["MediaSources"]] == [a]
        # the kept media source (StreamService.source_row) went with the split
        assert c.get(f"/Videos/{a}/stream", params={"static": "true", "mediaSourceId": b}).status_code == 404
        assert c.get(f"/Videos/{a}/AdditionalParts").json()["TotalRecordCount"] == 0


def test_no_ffmpeg_left_behind(live):
    """Progressive streams end their ffmpeg when the client goes away."""
    item = _item(live, "Long Movie")["Id"]
    with live.client() as anonymous, anonymous.stream("GET", f"/Videos/{item}/stream.ts",
                                                      params={"videoCodec": "h264"}) as r:
        assert r.status_code == 200
        chunks = r.iter_bytes()  # kept: a dropped iterator closes the response at once
        next(chunks)
        assert _stream_ffmpegs(), "the stream's ffmpeg is not seen while it streams"
    for _ in range(50):
        if not _stream_ffmpegs():
            break
        time.sleep(0.1)
    assert _stream_ffmpegs() == []


def _stream_ffmpegs() -> list[int]:
    """This process's ffmpeg children that write a stream to their stdout (``pipe:1``).

    The server's other ffmpeg runs (a scan's video frames for artwork, trickplay, subtitles)
    write to files and may still be going on a slow machine; they are not a stream's.
    """
    out = subprocess.run(["pgrep", "-P", str(os.getpid()), "-f", "ffmpeg"], capture_output=True, text=True)
    pids = [int(p) for p in out.stdout.split()]
    # start_new_session puts ffmpeg in its own session; still our child.
    return [p for p in pids if _alive(p) and _writes_to_stdout(p)]


def _writes_to_stdout(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().rstrip(b"\0").split(b"\0")[-1] == b"pipe:1"
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False

