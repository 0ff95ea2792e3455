"""Live TV as a Jellyfin client plays it, against a real server and a paced real-time MPEG-TS
source (ffmpeg -re relayed over HTTP on 127.0.0.1, tests/livetv_source.py): channels are items
with logos, PlaybackInfo -> /LiveStreams/Open -> live HLS whose segment decodes, viewers share a
tuner, the tuner limit, recordings in the Recordings view played like any video, the livetv view,
and the validation errors."""

from __future__ import annotations

import io
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urljoin

import av
import pytest

from tests.livetv_source import LiveSource

HLS_PROFILE = {"Name": "test", "MaxStreamingBitrate": 20_000_000,
               "DirectPlayProfiles": [{"Container": "mp4", "Type": "Video", "VideoCodec": "h264", "AudioCodec": "aac"}],
               "TranscodingProfiles": [{"Container": "ts", "Type": "Video", "Protocol": "hls", "VideoCodec": "h264",
                                        "AudioCodec": "aac", "Context": "Streaming"}]}


@pytest.fixture(scope="module")
def source():
    src = LiveSource()
    yield src
    src.close()


def _wait_for(fn, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out")


def _setup(server, tmp_path: Path, source: LiveSource, tuner_count: int = 0):
    tv = tmp_path / "tv"
    tv.mkdir(exist_ok=True)
    (tv / "channels.m3u").write_text(
        "#EXTM3U\n"
        f'#EXTINF:-1 tvg-id="news.example" tvg-chno="5" tvg-logo="{source.url}/logo.png" '
        f'group-title="News",News Five\n{source.url}/news.ts?token=abc\n'
        f'#EXTINF:-1 tvg-chno="6",Sport Six\n{source.url}/sport.ts\n', encoding="utf-8")
    c = server.admin()
    assert c.post("/System/Configuration/filesystem", json={"AllowedRoots": [str(tmp_path)]}).status_code == 204
    r = c.post("/LiveTv/TunerHosts", json={"Type": "m3u", "Url": str(tv / "channels.m3u"), "TunerCount": tuner_count})
    assert r.status_code == 200, r.text
    channels = {ch["Name"]: ch for ch in c.get("/LiveTv/Channels").json()["Items"]}
    return c, r.json(), channels


def _live_streams(server):
    return server.ctx.live_streams


def test_channel_plays_from_playback_info_through_live_hls(server, tmp_path, source):
    c, tuner, channels = _setup(server, tmp_path, source)
    news = channels["News Five"]
    assert news["Type"] == "TvChannel" and news["ChannelNumber"] == "5"
    item = c.get(f"/Items/{news['Id']}").json()
    assert item["Type"] == "TvChannel" and item["Name"] == "News Five" and item["ChannelNumber"] == "5"
    user_item = c.get(f"/Users/{server.admin_id}/Items/{news['Id']}").json()
    assert user_item["Id"] == news["Id"] and "UserData" in user_item

    # The tvg-logo is downloaded once, with a BlurHash, and served as the channel's image.
    logo = _wait_for(lambda: (i := c.get(f"/Items/{news['Id']}").json()).get("ImageTags", {}).get("Primary") and i)
    assert logo["ImageBlurHashes"]["Primary"]
    image = c.get(f"/Items/{news['Id']}/Images/Primary")
    assert image.status_code == 200 and image.headers["content-type"].startswith("image/")

    # Favourites: the channel list honours isFavorite.
    assert c.post(f"/UserFavoriteItems/{news['Id']}").json()["IsFavorite"] is True
    favourites = c.get("/LiveTv/Channels", params={"isFavorite": "true", "userId": server.admin_id}).json()
    assert [ch["Name"] for ch in favourites["Items"]] == ["News Five"]
    assert favourites["Items"][0]["UserData"]["IsFavorite"] is True

    # PlaybackInfo: the source must be opened first (jellyfin-web then calls /LiveStreams/Open).
    info = c.post(f"/Items/{news['Id']}/PlaybackInfo", json={"DeviceProfile": HLS_PROFILE}).json()
    src = info["MediaSources"][0]
    assert src["RequiresOpening"] is True and src["OpenToken"] and "LiveStreamId" not in src
    assert src["IsInfiniteStream"] is True and src["SupportsTranscoding"] is True

    # Open with the OpenToken in the body, as jellyfin-web sends it.
    opened = c.post("/LiveStreams/Open", json={"OpenToken": src["OpenToken"], "PlaySessionId": info["PlaySessionId"],
                                               "DeviceProfile": HLS_PROFILE})
    assert opened.status_code == 200, opened.text
    live = opened.json()["MediaSource"]
    assert live["LiveStreamId"]
    kinds = {(s["Type"], s["Codec"]) for s in live["MediaStreams"]}
    assert ("Video", "h264") in kinds and ("Audio", "aac") in kinds
    assert "/live.m3u8" in live["TranscodingUrl"] and live["LiveStreamId"] in live["TranscodingUrl"]
    # The token in the query works too (and shares the tuner stream).
    again = c.post("/LiveStreams/Open", params={"openToken": src["OpenToken"]})
    assert again.status_code == 200 and again.json()["MediaSource"]["LiveStreamId"] != live["LiveStreamId"]
    assert source.open_connections("/news.ts") == 1

    playlist_url = urljoin(server.url, live["TranscodingUrl"])
    playlist = c.get(playlist_url)
    assert playlist.status_code == 200 and "#EXTM3U" in playlist.text
    assert "#EXT-X-ENDLIST" not in playlist.text  # live: a sliding window
    segment_uri = next(line for line in playlist.text.splitlines() if line and not line.startswith("#"))
    segment = c.get(urljoin(playlist_url, segment_uri))
    assert segment.status_code == 200 and segment.content[:1] == b"\x47"
    with av.open(io.BytesIO(segment.content), format="mpegts") as media:
        frames = [f for f in media.decode(video=0)]
    assert frames and frames[0].width == 320

    # master.m3u8 of a channel leads to the same live playlist; Similar answers for a channel.
    master = c.get(playlist_url.replace("/live.m3u8", "/master.m3u8"))
    assert master.status_code == 200 and "live.m3u8?" in master.text
    assert c.get(f"/Items/{news['Id']}/Similar").status_code == 200

    # The direct relay of the opened stream.
    with c.stream("GET", f"/LiveTv/LiveStreamFiles/{live['LiveStreamId']}/stream.ts") as relay:
        first = next(relay.iter_bytes())
    assert first[:1] == b"\x47"

    # Closing every LiveStreamId releases the tuner and the upstream connection.
    assert c.post("/LiveStreams/Close", params={"liveStreamId": again.json()["MediaSource"]["LiveStreamId"]}
                  ).status_code == 204
    assert _live_streams(server).for_channel(news["Id"]) is not None  # one viewer left
    assert c.post("/LiveStreams/Close", params={"liveStreamId": live["LiveStreamId"]}).status_code == 204
    _wait_for(lambda: _live_streams(server).for_channel(news["Id"]) is None)
    _wait_for(lambda: source.open_connections("/news.ts") == 0)


def test_a_channel_on_the_video_stream_routes(server, tmp_path, source):
    """/Videos/{channelId}/stream.ts (and stream?static=true) relay the opened live stream named by
    LiveStreamId, or the channel's own, as MPEG-TS; other containers are a 400 ProblemDetails."""
    c, tuner, channels = _setup(server, tmp_path, source)
    news, sport = channels["News Five"]["Id"], channels["Sport Six"]["Id"]
    info = c.post(f"/Items/{news}/PlaybackInfo", json={"DeviceProfile": HLS_PROFILE}).json()
    live = c.post("/LiveStreams/Open", json={"OpenToken": info["MediaSources"][0]["OpenToken"],
                                             "DeviceProfile": HLS_PROFILE}).json()["MediaSource"]
    for path, params in ((f"/Videos/{news}/stream.ts", {"LiveStreamId": live["LiveStreamId"], "Static": "true"}),
                         (f"/Videos/{news}/stream", {"static": "true", "liveStreamId": live["LiveStreamId"]}),
                         (f"/Videos/{sport}/stream.ts", {})):
        with c.stream("GET", path, params=params) as r:
            assert r.status_code == 200, (path, r.read())
            assert r.headers["content-type"].startswith("video/mp2t")
            first = next(r.iter_bytes())
        assert first[:1] == b"\x47", path
    head = c.head(f"/Videos/{news}/stream.ts", params={"LiveStreamId": live["LiveStreamId"]})
    assert head.status_code == 200 and head.headers["content-type"].startswith("video/mp2t")

    for path, params, status in ((f"/Videos/{news}/stream.mp4", {"LiveStreamId": live["LiveStreamId"]}, 400),
                                 (f"/Videos/{news}/stream.ts", {"LiveStreamId": "f" * 32}, 404),
                                 (f"/Videos/{sport}/stream.ts", {"LiveStreamId": live["LiveStreamId"]}, 400),
                                 (f"/Videos/{'e' * 32}/stream.ts", {}, 404)):
        r = c.get(path, params=params)
        assert r.status_code == status, (path, r.text)
        assert r.headers["content-type"].startswith("application/problem+json")
    assert c.post("/LiveStreams/Close", params={"liveStreamId": live["LiveStreamId"]}).status_code == 204
    _wait_for(lambda: _live_streams(server).for_channel(news) is None)
    _wait_for(lambda: _live_streams(server).for_channel(sport) is None)
    assert c.delete("/LiveTv/TunerHosts", params={"id": tuner["Id"]}).status_code == 204


def test_two_viewers_share_one_tuner_and_the_limit_is_enforced(server, tmp_path, source):
    c, tuner, channels = _setup(server, tmp_path, source, tuner_count=1)
    news, sport = channels["News Five"], channels["Sport Six"]
    before = source.total["/news.ts"]
    first = c.post(f"/Items/{news['Id']}/PlaybackInfo", json={"AutoOpenLiveStream": True,
                                                               "DeviceProfile": HLS_PROFILE}).json()["MediaSources"][0]
    assert first["LiveStreamId"]  # opened by PlaybackInfo itself
    with server.client(server.admin_token, "second-device") as other:
        second = other.post("/LiveStreams/Open", json={"OpenToken": news["Id"]}).json()["MediaSource"]
        # Both viewers fetch the live playlist: one upstream connection, one encoder.
        a = c.get(urljoin(server.url, first["TranscodingUrl"]))
        b = other.get(urljoin(server.url, second["TranscodingUrl"]))
        assert a.status_code == b.status_code == 200
        assert source.total["/news.ts"] - before == 1 and source.open_connections("/news.ts") == 1
        assert len(_live_streams(server).for_channel(news["Id"]).hls) == 1

        busy = other.post("/LiveStreams/Open", json={"OpenToken": sport["Id"]})
        assert busy.status_code == 503
        assert "tuner" in busy.json()["detail"] and "News Five" in busy.json()["detail"]

        # A recording of the channel being watched shares the tuner stream too.
        now = datetime.now(UTC)
        assert c.post("/LiveTv/Timers", json={"ChannelId": news["Id"], "Name": "Shared", "StartDate": now.isoformat(),
                                              "EndDate": (now + timedelta(seconds=3)).isoformat()}
                      ).status_code == 204
        timer = c.get("/LiveTv/Timers").json()["Items"][0]
        _wait_for(lambda: c.get(f"/LiveTv/Timers/{timer['Id']}").json()["Status"] == "Completed", timeout=30)
        assert source.total["/news.ts"] - before == 1

        # The last viewer leaving (a stop report with the LiveStreamId) frees the tuner.
        assert c.post("/LiveStreams/Close", params={"liveStreamId": first["LiveStreamId"]}).status_code == 204
        assert other.post("/Sessions/Playing/Stopped", json={"ItemId": news["Id"],
                                                             "LiveStreamId": second["LiveStreamId"]}
                          ).status_code == 204
        _wait_for(lambda: _live_streams(server).for_channel(news["Id"]) is None)
        now_sport = other.post("/LiveStreams/Open", json={"OpenToken": sport["Id"]})
        assert now_sport.status_code == 200
        other.post("/LiveStreams/Close", params={"liveStreamId": now_sport.json()["MediaSource"]["LiveStreamId"]})


def test_recording_is_listed_in_the_recordings_view_and_plays(server, tmp_path, source):
    c, _, channels = _setup(server, tmp_path, source)
    news = channels["News Five"]
    now = datetime.now(UTC)
    assert c.post("/LiveTv/Timers", json={"ChannelId": news["Id"], "Name": "Late News",
                                          "StartDate": now.isoformat(),
                                          "EndDate": (now + timedelta(seconds=4)).isoformat()}).status_code == 204
    timer = c.get("/LiveTv/Timers").json()["Items"][0]
    _wait_for(lambda: c.get(f"/LiveTv/Timers/{timer['Id']}").json()["Status"] == "Completed", timeout=40)

    folders = c.get("/LiveTv/Recordings/Folders", params={"userId": server.admin_id}).json()["Items"]
    assert [f["Name"] for f in folders] == ["Recordings"]
    views = c.get(f"/Users/{server.admin_id}/Views").json()["Items"]
    assert "Recordings" in [v["Name"] for v in views]
    children = c.get("/Items", params={"parentId": folders[0]["Id"], "userId": server.admin_id}).json()["Items"]
    assert [i["Name"] for i in children] == ["Late News"]
    recording = c.get("/LiveTv/Recordings").json()["Items"][0]
    assert recording["Id"] == children[0]["Id"] == timer["Id"] and recording["ChannelName"] == "News Five"
    assert recording["RunTimeTicks"] > 2 * 10_000_000

    info = c.post(f"/Items/{recording['Id']}/PlaybackInfo", json={"DeviceProfile": HLS_PROFILE}).json()
    src = info["MediaSources"][0]
    assert src["Path"] == recording["Path"] and any(s["Type"] == "Video" for s in src["MediaStreams"])
    assert src.get("SupportsTranscoding") and src.get("TranscodingUrl")
    ranged = c.get(f"/Videos/{recording['Id']}/stream", params={"static": "true"}, headers={"Range": "bytes=0-187"})
    _recording_plays_as_fmp4_hls(c, recording["Id"])
    assert ranged.status_code == 206 and ranged.content[:1] == b"\x47" and len(ranged.content) == 188

    # Resume position: progress then stop half way through a long enough recording is kept.
    c.post("/Sessions/Playing/Stopped", json={"ItemId": recording["Id"], "PositionTicks": 10_000_000})
    assert "UserData" in c.get(f"/Users/{server.admin_id}/Items/{recording['Id']}").json()

    path = Path(recording["Path"])
    assert c.delete(f"/Items/{recording['Id']}").status_code == 204
    assert not path.exists()
    assert c.get(f"/Items/{recording['Id']}").status_code == 404
    assert c.get("/LiveTv/Recordings").json()["TotalRecordCount"] == 0


def _recording_plays_as_fmp4_hls(c, item_id: str) -> None:
    """HLS with fMP4 segments copying the recording's codecs, as jellyfin-web asks for it: its
    ADTS AAC (from MPEG-TS) must be converted for the MP4 muxer, or ffmpeg fails at once."""
    master = c.get(f"/videos/{item_id}/master.m3u8", params={
        "MediaSourceId": item_id, "DeviceId": "hls-test", "PlaySessionId": "hls-test", "VideoCodec": "h264",
        "AudioCodec": "aac", "SegmentContainer": "mp4", "TranscodeReasons": "ContainerNotSupported"})
    assert master.status_code == 200, master.text
    main_url = urljoin(str(master.url), next(line for line in master.text.splitlines()
                                            if line and not line.startswith("#")))
    main = c.get(main_url)
    assert main.status_code == 200, main.text
    init_uri = next(line for line in main.text.splitlines() if line.startswith("#EXT-X-MAP")).split('"')[1]
    first_uri = next(line for line in main.text.splitlines() if line and not line.startswith("#"))
    init, first = c.get(urljoin(main_url, init_uri)), c.get(urljoin(main_url, first_uri))
    assert init.status_code == 200, init.text
    assert first.status_code == 200, first.text
    with av.open(io.BytesIO(init.content + first.content), format="mp4") as media:
        kinds = {s.type for s in media.streams}
        frames = [f for f in media.decode(video=0)]
    assert kinds == {"video", "audio"} and frames and frames[0].width == 320


def test_livetv_view_and_access(server, tmp_path, source):
    c = server.admin()
    # No recording yet: empty lists, not errors.
    assert c.get("/LiveTv/Recordings/Series").json()["Items"] == []
    assert c.get("/LiveTv/Recordings/Folders").json()["Items"] == []
    assert not [v for v in c.get("/UserViews").json()["Items"] if v.get("CollectionType") == "livetv"]
    _, tuner, channels = _setup(server, tmp_path, source)
    views = c.get("/UserViews", params={"userId": server.admin_id}).json()["Items"]
    livetv = [v for v in views if v.get("CollectionType") == "livetv"]
    assert len(livetv) == 1 and livetv[0]["Type"] == "UserView" and livetv[0]["Name"] == "Live TV"
    listed = c.get("/Items", params={"parentId": livetv[0]["Id"], "userId": server.admin_id}).json()["Items"]
    assert {i["Name"] for i in listed} == {"News Five", "Sport Six"}
    # Channels stay out of ordinary recursive listings.
    assert not [i for i in c.get("/Items", params={"recursive": "true"}).json()["Items"] if i["Type"] == "TvChannel"]

    user = c.post("/Users/New", json={"Name": "nolive", "Password": "pw"}).json()
    policy = {**user["Policy"], "EnableLiveTvAccess": False}
    assert c.post(f"/Users/{user['Id']}/Policy", json=policy).status_code == 204
    login = server.client(device="nolive").post("/Users/AuthenticateByName",
                                                json={"Username": "nolive", "Pw": "pw"}).json()
    with server.client(login["AccessToken"], "nolive") as viewer:
        assert not [v for v in viewer.get("/UserViews").json()["Items"] if v.get("CollectionType") == "livetv"]
        assert viewer.get(f"/Items/{channels['News Five']['Id']}").status_code == 404
        assert viewer.post(f"/Items/{channels['News Five']['Id']}/PlaybackInfo", json={}).status_code == 404
        assert viewer.get("/LiveTv/Channels").status_code == 403
        assert viewer.get(f"/Videos/{channels['News Five']['Id']}/stream.ts").status_code == 404

    # Stable ids: the tuner's URLs rotate (new tokens), the channel ids stay.
    m3u = Path(tuner["Url"])
    m3u.write_text(m3u.read_text().replace("token=abc", "token=xyz"), encoding="utf-8")
    server.ctx.livetv.channel_cache_seconds = 0
    again = {ch["Name"]: ch["Id"] for ch in c.get("/LiveTv/Channels").json()["Items"]}
    assert again == {name: ch["Id"] for name, ch in channels.items()}

    # Without tuners the view goes away.
    assert c.delete("/LiveTv/TunerHosts", params={"id": tuner["Id"]}).status_code == 204
    assert not [v for v in c.get("/UserViews").json()["Items"] if v.get("CollectionType") == "livetv"]


def test_validation_errors(server, tmp_path, source):
    c = server.admin()
    assert c.post("/System/Configuration/filesystem", json={"AllowedRoots": [str(tmp_path)]}).status_code == 204
    guide = tmp_path / "guide.xml"
    guide.write_text('<?xml version="1.0"?><tv><channel id="a"><display-name>A</display-name></channel></tv>')
    broken = tmp_path / "broken.xml"
    broken.write_text("<tv><programme start=", encoding="utf-8")

    r = c.post("/LiveTv/TunerHosts", json={"Type": "m3u", "Url": str(guide)})
    assert r.status_code == 400 and "not an M3U" in r.json()["detail"]
    r = c.post("/LiveTv/TunerHosts", json={"Type": "hdhomerun", "Url": f"{source.url}/nothing-here"})
    assert r.status_code == 400 and "HDHomeRun" in r.json()["detail"]
    r = c.post("/LiveTv/TunerHosts", json={"Type": "satellite", "Url": str(guide)})
    assert r.status_code == 400 and "Unknown tuner type" in r.json()["detail"]
    r = c.post("/LiveTv/TunerHosts", json={"Type": "m3u"})
    assert r.status_code == 400 and "Url" in r.json()["detail"]
    assert c.get("/LiveTv/Channels").json()["TotalRecordCount"] == 0  # nothing junk was added

    r = c.post("/LiveTv/ListingProviders", params={"validateListings": "true"},
               json={"Type": "xmltv", "Path": str(broken)})
    assert r.status_code == 400 and "not a valid XMLTV" in r.json()["detail"]

    # A provider that breaks later: the guide refresh task ends Failed with the reason.
    r = c.post("/LiveTv/ListingProviders", json={"Type": "xmltv", "Path": str(guide)})
    assert r.status_code == 200
    task = next(t for t in c.get("/ScheduledTasks").json() if t["Key"] == "RefreshGuide")
    _wait_for(lambda: c.get(f"/ScheduledTasks/{task['Id']}").json()["State"] == "Idle")
    broken.replace(guide)
    assert c.post(f"/ScheduledTasks/Running/{task['Id']}").status_code == 204

    def failed():
        t = c.get(f"/ScheduledTasks/{task['Id']}").json()
        result = t.get("LastExecutionResult") or {}
        return t["State"] == "Idle" and result.get("Status") == "Failed" and result

    result = _wait_for(failed)
    assert "guide.xml" in result["ErrorMessage"]


def test_cancelling_a_series_timer_stops_its_recording(server, tmp_path, source):
    c, _, channels = _setup(server, tmp_path, source)
    news = channels["News Five"]
    now = datetime.now(UTC)
    stamp = "%Y%m%d%H%M%S +0000"
    guide = tmp_path / "tv" / "guide.xml"
    guide.write_text(f"""<?xml version="1.0"?><tv>
  <channel id="news.example"><display-name>News</display-name></channel>
  <programme start="{(now - timedelta(minutes=1)).strftime(stamp)}"
             stop="{(now + timedelta(minutes=5)).strftime(stamp)}" channel="news.example">
    <title>Night Talk</title><sub-title>Pilot</sub-title><episode-num system="xmltv_ns">0.0.</episode-num>
  </programme></tv>""", encoding="utf-8")
    assert c.post("/LiveTv/ListingProviders", json={"Type": "xmltv", "Path": str(guide)}).status_code == 200
    program = _wait_for(lambda: c.get("/LiveTv/Programs").json()["Items"])[0]
    assert c.post("/LiveTv/SeriesTimers", json={"ProgramId": program["Id"], "ChannelId": news["Id"],
                                                "Name": "Night Talk"}).status_code == 204
    timer = _wait_for(lambda: c.get("/LiveTv/Timers", params={"isActive": "true"}).json()["Items"])[0]
    series_id = timer["SeriesTimerId"]
    # Recording now: the episode sits in the series' folder of the Recordings view.
    def series_groups():
        r = c.get("/LiveTv/Recordings/Series")
        assert r.status_code == 200, r.text
        return r.json()["Items"]

    groups = _wait_for(series_groups)
    assert [g["Name"] for g in groups] == ["Night Talk"]
    assert c.delete(f"/LiveTv/SeriesTimers/{series_id}").status_code == 204
    stopped = _wait_for(lambda: (t := c.get(f"/LiveTv/Timers/{timer['Id']}").json())["Status"] == "Cancelled" and t)
    assert stopped["Status"] == "Cancelled"
    assert not server.ctx.recordings.is_recording(timer["Id"])


def test_a_tuner_that_is_not_plain_http_is_read_through_the_ffmpeg_pipe(server, tmp_path, source):
    """An HLS-looking source goes through ffmpeg (server/playback/pipe.py); a viewer gets MPEG-TS,
    and the stream's end (the viewer leaving) ends that ffmpeg."""
    tv = tmp_path / "tv"
    tv.mkdir(exist_ok=True)
    (tv / "piped.m3u").write_text(f'#EXTM3U\n#EXTINF:-1 tvg-chno="9",Piped Nine\n{source.url}/sport.ts?via=.m3u8\n',
                                  encoding="utf-8")
    c = server.admin()
    assert c.post("/System/Configuration/filesystem", json={"AllowedRoots": [str(tmp_path)]}).status_code == 204
    assert c.post("/LiveTv/TunerHosts", json={"Type": "m3u", "Url": str(tv / "piped.m3u")}).status_code == 200
    channel = next(ch for ch in c.get("/LiveTv/Channels").json()["Items"] if ch["Name"] == "Piped Nine")
    with c.stream("GET", f"/LiveTv/LiveStreamFiles/{channel['Id']}/stream.ts") as relay:
        assert relay.status_code == 200
        chunks = relay.iter_bytes()  # kept: a dropped iterator closes the response
        received = b""
        while len(received) < 50_000:  # over a second of the paced source
            received += next(chunks)
        stream = _live_streams(server).for_channel(channel["Id"])
        assert stream is not None and stream.proc is not None and stream.proc.returncode is None
        proc = stream.proc
    assert received[:1] == b"\x47" and received[188:189] == b"\x47"  # MPEG-TS packets
    _wait_for(lambda: _live_streams(server).for_channel(channel["Id"]) is None)
    _wait_for(lambda: proc.returncode is not None)  # ffmpeg killed and reaped
