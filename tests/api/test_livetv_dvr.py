"""Live TV guide and DVR against a real server: an M3U tuner whose channel is an HTTP stream
served by the test, an XMLTV guide, programmes, channel mapping, a timer that really records
with ffmpeg, series timers, recordings, the live stream and permissions."""

from __future__ import annotations

import functools
import http.server
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import av
import pytest

from tests.mediagen import make_video


def _xmltv_time(moment: datetime) -> str:
    return moment.strftime("%Y%m%d%H%M%S +0000")


@pytest.fixture(scope="module")
def stream_host(tmp_path_factory):
    """A local HTTP server playing the part of an IPTV source."""
    root = tmp_path_factory.mktemp("iptv")
    make_video(root / "one.ts", seconds=2.0, width=160, height=120)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    httpd.shutdown()
    httpd.server_close()


def _setup(server, tmp_path: Path, stream_url: str):
    now = datetime.now(UTC).replace(microsecond=0)
    tv = tmp_path / "tv"
    tv.mkdir()
    (tv / "channels.m3u").write_text(
        "#EXTM3U\n"
        f'#EXTINF:-1 tvg-id="one.example" tvg-chno="7",Channel Seven\n{stream_url}/one.ts\n'
        f'#EXTINF:-1 tvg-chno="8",Channel Eight\n{stream_url}/missing.ts\n', encoding="utf-8")
    tomorrow = now + timedelta(days=1)
    (tv / "guide.xml").write_text(f"""<?xml version="1.0" encoding="UTF-8"?>
<tv>
  <channel id="one.example"><display-name>Seven</display-name><display-name>7</display-name></channel>
  <channel id="eight.example"><display-name>Eight HD</display-name></channel>
  <programme start="{_xmltv_time(now - timedelta(minutes=10))}" stop="{_xmltv_time(now + timedelta(minutes=20))}"
             channel="one.example">
    <title>Evening News</title><desc>Today's news.</desc><category>News</category>
  </programme>
  <programme start="{_xmltv_time(tomorrow)}" stop="{_xmltv_time(tomorrow + timedelta(minutes=30))}"
             channel="one.example">
    <title>Space Show</title><sub-title>Launch</sub-title><episode-num system="xmltv_ns">0.4.</episode-num>
    <new/>
  </programme>
  <programme start="{_xmltv_time(tomorrow + timedelta(hours=2))}"
             stop="{_xmltv_time(tomorrow + timedelta(hours=2, minutes=30))}" channel="one.example">
    <title>Space Show</title><sub-title>Orbit</sub-title><episode-num system="xmltv_ns">0.3.</episode-num>
    <previously-shown/>
  </programme>
  <programme start="{_xmltv_time(tomorrow + timedelta(hours=3))}"
             stop="{_xmltv_time(tomorrow + timedelta(hours=5))}" channel="one.example">
    <title>Big Film</title><category>Movie</category><date>1999</date>
  </programme>
</tv>
""", encoding="utf-8")
    c = server.admin()
    assert c.post("/System/Configuration/filesystem", json={"AllowedRoots": [str(tmp_path)]}).status_code == 204
    assert c.post("/LiveTv/TunerHosts", json={"Type": "m3u", "Url": str(tv / "channels.m3u")}).status_code == 200
    provider = c.post("/LiveTv/ListingProviders", json={"Type": "xmltv", "Path": str(tv / "guide.xml")}).json()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # adding a provider refreshes the guide in the background
        if c.get("/LiveTv/Programs").json()["TotalRecordCount"] == 4:
            break
        time.sleep(0.2)
    channels = {ch["Name"]: ch for ch in c.get("/LiveTv/Channels").json()["Items"]}
    return c, provider, channels


def _wait_for(fn, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("timed out")


def test_guide_programmes_and_mapping(server, tmp_path, stream_host):
    c, provider, channels = _setup(server, tmp_path, stream_host[0])
    seven = channels["Channel Seven"]
    programs = c.get("/LiveTv/Programs").json()
    assert programs["TotalRecordCount"] == 4  # matched by tvg-id; Eight has no guide match
    assert {p["ChannelId"] for p in programs["Items"]} == {seven["Id"]}
    news = c.get("/LiveTv/Programs", params={"isAiring": "true"}).json()["Items"]
    assert [p["Name"] for p in news] == ["Evening News"]
    assert news[0]["Type"] == "Program" and news[0]["IsNews"] is True and news[0]["ChannelName"] == "Channel Seven"
    assert seven["CurrentProgram"]["Name"] == "Evening News"
    movies = c.get("/LiveTv/Programs", params={"isMovie": "true"}).json()["Items"]
    assert [(p["Name"], p["ProductionYear"]) for p in movies] == [("Big Film", 1999)]
    space = c.post("/LiveTv/Programs", json={"IsSeries": True, "SortBy": ["Name"]}).json()["Items"]
    assert [(p["EpisodeTitle"], p["ParentIndexNumber"], p["IndexNumber"]) for p in space] == [
        ("Launch", 1, 5), ("Orbit", 1, 4)]
    assert c.get(f"/LiveTv/Programs/{news[0]['Id']}").json()["Overview"] == "Today's news."
    assert c.get("/LiveTv/Programs/0123456789abcdef0123456789abcdef").status_code == 404

    options = c.get("/LiveTv/ChannelMappingOptions", params={"providerId": provider["Id"]}).json()
    assert {p["Id"] for p in options["ProviderChannels"]} == {"one.example", "eight.example"}
    mapped = {t["Name"]: t.get("ProviderChannelId") for t in options["TunerChannels"]}
    assert mapped == {"Channel Seven": "one.example", "Channel Eight": None}
    r = c.post("/LiveTv/ChannelMappings", json={"ProviderId": provider["Id"], "TunerChannelId": "8",
                                                "ProviderChannelId": "eight.example"})
    assert r.status_code == 200 and r.json()["ProviderChannelName"] == "Eight HD"
    options = c.get("/LiveTv/ChannelMappingOptions", params={"providerId": provider["Id"]}).json()
    assert {"Name": "8", "Value": "eight.example"} in options["Mappings"]
    assert c.get("/LiveTv/ChannelMappingOptions", params={"providerId": "nope"}).status_code == 404


def test_timer_records_the_channel(server, tmp_path, stream_host):
    c, _, channels = _setup(server, tmp_path, stream_host[0])
    seven = channels["Channel Seven"]
    now = datetime.now(UTC)
    bad = c.post("/LiveTv/Timers", json={"ChannelId": seven["Id"], "StartDate": now.isoformat(),
                                         "EndDate": (now - timedelta(minutes=1)).isoformat()})
    assert bad.status_code == 400 and bad.headers["content-type"].startswith("application/problem+json")
    assert c.post("/LiveTv/Timers", json={"ChannelId": "0123456789abcdef0123456789abcdef",
                                          "StartDate": now.isoformat(),
                                          "EndDate": (now + timedelta(seconds=5)).isoformat()}).status_code == 404

    r = c.post("/LiveTv/Timers", json={"ChannelId": seven["Id"], "Name": "Quick clip",
                                       "StartDate": (now - timedelta(seconds=1)).isoformat(),
                                       "EndDate": (now + timedelta(seconds=20)).isoformat()})
    assert r.status_code == 204
    timer = c.get("/LiveTv/Timers").json()["Items"][0]
    assert timer["Name"] == "Quick clip" and timer["ChannelName"] == "Channel Seven"
    # The source stream is two seconds long: ffmpeg records it and ends.
    done = _wait_for(lambda: (t := c.get(f"/LiveTv/Timers/{timer['Id']}").json())["Status"] == "Completed" and t)
    assert done["Status"] == "Completed"
    recordings = c.get("/LiveTv/Recordings").json()
    assert recordings["TotalRecordCount"] == 1
    recording = recordings["Items"][0]
    assert recording["Type"] == "Video" and recording["Status"] == "Completed"
    path = Path(recording["Path"])
    assert path.is_file() and path.parent == server.data_dir / "recordings"
    with av.open(str(path)) as media:
        assert media.streams.video and media.duration / 1e6 > 1.5
    streamed = c.get(f"/LiveTv/LiveRecordings/{recording['Id']}/stream")
    assert streamed.status_code == 200 and streamed.content == path.read_bytes()
    assert c.get("/LiveTv/Timers", params={"isScheduled": "true"}).json()["TotalRecordCount"] == 0

    live = c.get(f"/LiveTv/LiveStreamFiles/{seven['Id']}/stream.ts")
    assert live.status_code == 200 and live.content[:1] == b"\x47"  # MPEG-TS sync byte
    assert c.get("/LiveTv/LiveStreamFiles/0123456789abcdef0123456789abcdef/stream.ts").status_code == 404

    assert c.delete(f"/LiveTv/Recordings/{recording['Id']}").status_code == 204
    assert not path.exists()
    assert c.get(f"/LiveTv/Recordings/{recording['Id']}").status_code == 404


def test_a_dead_channel_ends_in_error(server, tmp_path, stream_host):
    c, _, channels = _setup(server, tmp_path, stream_host[0])
    now = datetime.now(UTC)
    assert c.post("/LiveTv/Timers", json={"ChannelId": channels["Channel Eight"]["Id"],
                                          "StartDate": now.isoformat(),
                                          "EndDate": (now + timedelta(seconds=20)).isoformat()}).status_code == 204
    timer = c.get("/LiveTv/Timers").json()["Items"][0]
    failed = _wait_for(lambda: (t := c.get(f"/LiveTv/Timers/{timer['Id']}").json())["Status"] == "Error" and t)
    assert failed["Status"] == "Error"


def test_series_timers_and_permissions(server, tmp_path, stream_host):
    c, _, channels = _setup(server, tmp_path, stream_host[0])
    launch = next(p for p in c.get("/LiveTv/Programs").json()["Items"] if p.get("EpisodeTitle") == "Launch")
    defaults = c.get("/LiveTv/Timers/Defaults", params={"programId": launch["Id"]}).json()
    assert defaults["Name"] == "Space Show" and defaults["ChannelId"] == channels["Channel Seven"]["Id"]
    assert c.get("/LiveTv/Timers/Defaults", params={"programId": "0123456789abcdef0123456789abcdef"}).status_code == 404

    defaults["RecordNewOnly"] = True
    assert c.post("/LiveTv/SeriesTimers", json=defaults).status_code == 204
    series = c.get("/LiveTv/SeriesTimers").json()["Items"]
    assert [s["Name"] for s in series] == ["Space Show"]
    timers = c.get("/LiveTv/Timers", params={"seriesTimerId": series[0]["Id"]}).json()["Items"]
    assert [t["ProgramId"] for t in timers] == [launch["Id"]]  # the repeat is skipped
    program = c.get(f"/LiveTv/Programs/{launch['Id']}").json()
    assert program["TimerId"] == timers[0]["Id"] and program["SeriesTimerId"] == series[0]["Id"]

    assert c.post(f"/LiveTv/SeriesTimers/{series[0]['Id']}", json={"RecordNewOnly": False}).status_code == 204
    assert c.get("/LiveTv/Timers", params={"seriesTimerId": series[0]["Id"]}).json()["TotalRecordCount"] == 2
    assert c.delete(f"/LiveTv/SeriesTimers/{series[0]['Id']}").status_code == 204
    assert c.get("/LiveTv/Timers").json()["TotalRecordCount"] == 0
    assert c.get(f"/LiveTv/SeriesTimers/{series[0]['Id']}").status_code == 404

    user = c.post("/Users/New", json={"Name": "viewer", "Password": "pw"}).json()
    policy = {**user["Policy"], "EnableLiveTvManagement": False, "EnableLiveTvAccess": True}
    assert c.post(f"/Users/{user['Id']}/Policy", json=policy).status_code == 204
    login = server.client(device="viewer-device").post("/Users/AuthenticateByName",
                                                       json={"Username": "viewer", "Pw": "pw"}).json()
    with server.client(login["AccessToken"], "viewer-device") as viewer:
        assert viewer.get("/LiveTv/Programs").status_code == 200
        denied = viewer.post("/LiveTv/Timers", json={"ProgramId": launch["Id"]})
        assert denied.status_code == 403 and "Live TV" in denied.json()["detail"]


def test_a_timer_in_the_future_starts_on_time_without_polling(server, tmp_path, stream_host):
    """The recorder sleeps until the next timer is due (not a read every two seconds, and not its
    one-minute idle cap): a timer a few seconds ahead starts at its time."""
    c, _, channels = _setup(server, tmp_path, stream_host[0])
    recorder = server.ctx.recordings
    assert recorder.idle_seconds >= 30  # an idle recorder does not poll the table
    now = datetime.now(UTC)
    r = c.post("/LiveTv/Timers", json={"ChannelId": channels["Channel Seven"]["Id"], "Name": "Later clip",
                                       "StartDate": (now + timedelta(seconds=3)).isoformat(),
                                       "EndDate": (now + timedelta(seconds=20)).isoformat()})
    assert r.status_code == 204
    timer = next(t for t in c.get("/LiveTv/Timers").json()["Items"] if t["Name"] == "Later clip")
    time.sleep(1)
    assert c.get(f"/LiveTv/Timers/{timer['Id']}").json()["Status"] == "New"  # not before its time
    started = _wait_for(lambda: (t := c.get(f"/LiveTv/Timers/{timer['Id']}").json())["Status"]
                        in ("InProgress", "Completed") and t, timeout=15)
    assert started and started["Status"] in ("InProgress", "Completed")
    assert time.time() - now.timestamp() < 15  # well before the idle cap would have woken it
