"""Issue 4's end-to-end check with jellyfin-apiclient-python (the Kodi add-on's and
jellyfin-mpv-shim's client) against a real server on 127.0.0.1: PlaybackInfo, the stream's
bytes, start / progress / stop reports, then the resume position on the item."""

from __future__ import annotations

import httpx
from jellyfin_apiclient_python import JellyfinClient

from tests.conftest import complete_wizard, start_server, stop_server
from tests.library_helpers import add_library_and_scan
from tests.mediagen import make_video

TICKS = 10_000_000


def test_play_an_item_end_to_end(tmp_path):
    movie = make_video(tmp_path / "Movies" / "Night Walk (2019)" / "Night Walk (2019).mkv", seconds=6)
    live = start_server(tmp_path / "data")
    try:
        complete_wizard(live, "mira", "pa55word")
        add_library_and_scan(live, "Movies", "movies", [tmp_path / "Movies"])
        with live.admin() as c:  # a six-second clip would otherwise count as watched at once
            config = c.get("/System/Configuration").json()
            config["MinResumeDurationSeconds"] = 0
            assert c.post("/System/Configuration", json=config).status_code == 204

        client = JellyfinClient()
        client.config.app("Reelroom Tests", "1.0.0", "pytest-machine", "mpv-shim-like")
        client.config.data["auth.ssl"] = False
        client.auth.connect_to_address(live.url)
        client.auth.login(live.url, "mira", "pa55word")
        api = client.jellyfin

        items = api.user_items(params={"Recursive": True, "IncludeItemTypes": "Movie"})["Items"]
        assert [i["Name"] for i in items] == ["Night Walk"]
        item_id = items[0]["Id"]

        info = api.get_play_info(item_id, profile={"Name": "mpv", "DirectPlayProfiles": [{"Type": "Video"}],
                                                   "TranscodingProfiles": [], "SubtitleProfiles": []})
        source = info["MediaSources"][0]
        assert source["SupportsDirectPlay"] is True and source["Container"] == "mkv"
        play_session = info["PlaySessionId"]

        # The client's own URL for direct play, fetched the way a player does.
        url = api.video_url(item_id, media_source_id=source["Id"])
        head = httpx.get(url, headers={"Range": "bytes=0-1023"})
        assert head.status_code == 206 and head.content == movie.read_bytes()[:1024]
        assert httpx.get(url).content == movie.read_bytes()

        report = {"ItemId": item_id, "MediaSourceId": source["Id"], "PlaySessionId": play_session,
                  "PlayMethod": "DirectPlay", "CanSeek": True}
        api.session_playing({**report, "PositionTicks": 0})
        now = [s for s in api.sessions() if s.get("NowPlayingItem")]
        assert now and now[0]["NowPlayingItem"]["Id"] == item_id
        api.session_progress({**report, "PositionTicks": 2 * TICKS, "IsPaused": False, "EventName": "timeupdate"})
        api.session_stop({**report, "PositionTicks": 3 * TICKS})

        item = api.get_item(item_id)
        assert item["UserData"]["PlaybackPositionTicks"] == 3 * TICKS
        assert item["UserData"]["Played"] is False and item["UserData"]["PlayCount"] == 1
        resume = api._get("UserItems/Resume", {"UserId": item["UserData"].get("UserId") or live.admin_id})
        assert item_id in [i["Id"] for i in resume["Items"]]
    finally:
        stop_server(live)
