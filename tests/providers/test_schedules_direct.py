"""Schedules Direct against a local fake of its JSON API: login (sha1 of the password),
countries (cached), lineups, validateLogin/validateListings, two days of schedules through
md5s, programmes and artwork, station mapping to tuner channels, and /LiveTv/Programs."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from tests.providers.fakes import LINEUP, SD_PASSWORD, SD_USER, FakeSchedulesDirect, guide_days


@pytest.fixture
def fake_sd() -> Iterator[FakeSchedulesDirect]:
    fake = FakeSchedulesDirect().start()
    yield fake
    fake.stop()


def _wait_for(fn, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("timed out")


def _setup(server, tmp_path, fake_sd) -> tuple:
    tv = tmp_path / "tv"
    tv.mkdir()
    (tv / "channels.m3u").write_text(
        "#EXTM3U\n"
        '#EXTINF:-1 tvg-chno="4",NBC\nhttp://127.0.0.1:9/nbc.ts\n'
        '#EXTINF:-1 tvg-chno="2",CBS\nhttp://127.0.0.1:9/cbs.ts\n'
        '#EXTINF:-1 tvg-chno="55",Local Access\nhttp://127.0.0.1:9/local.ts\n', encoding="utf-8")
    c = server.admin()
    assert c.post("/System/Configuration/schedulesdirect", json={"BaseUrl": fake_sd.api_url}).status_code == 204
    assert c.post("/System/Configuration/filesystem", json={"AllowedRoots": [str(tmp_path)]}).status_code == 204
    assert c.post("/LiveTv/TunerHosts", json={"Type": "m3u", "Url": str(tv / "channels.m3u")}).status_code == 200
    livetv = c.get("/System/Configuration/livetv").json()
    assert c.post("/System/Configuration/livetv", json={**livetv, "GuideDays": 2}).status_code == 204
    return c


def test_guide_through_schedules_direct(server, tmp_path, fake_sd):
    c = _setup(server, tmp_path, fake_sd)

    # countries come from the service, once (then from the cache)
    first = c.get("/LiveTv/ListingProviders/SchedulesDirect/Countries")
    assert first.status_code == 200 and first.headers["content-type"].startswith("application/json")
    assert {x["shortName"] for x in first.json()["North America"]} == {"USA", "CAN"}
    assert c.get("/LiveTv/ListingProviders/SchedulesDirect/Countries").json() == first.json()
    assert len(fake_sd.calls("GET", "/available/countries")) == 1

    # a wrong password is refused with the service's reason and nothing is stored
    r = c.post("/LiveTv/ListingProviders", params={"validateLogin": "true", "pw": "wrong"},
               json={"Type": "SchedulesDirect", "Username": SD_USER})
    assert r.status_code == 400 and "does not know that user name and password" in r.json()["detail"]
    assert not c.get("/System/Configuration/livetv").json().get("ListingProviders")

    # the right one: only the sha1 is sent and stored
    r = c.post("/LiveTv/ListingProviders", params={"validateLogin": "true", "pw": SD_PASSWORD},
               json={"Type": "SchedulesDirect", "Username": SD_USER, "Country": "USA", "ZipCode": "10001"})
    assert r.status_code == 200, r.text
    provider = r.json()
    sha1 = hashlib.sha1(SD_PASSWORD.encode()).hexdigest()
    assert provider["Type"] == "schedulesdirect" and provider["Password"] == sha1
    assert fake_sd.calls("POST", "/token")[-1].body == {"username": SD_USER, "password": sha1}
    assert fake_sd.calls("GET", "/status")  # the account was checked

    lineups = c.get("/LiveTv/ListingProviders/Lineups", params={"id": provider["Id"]}).json()
    assert {"Name": "Example Cable - Digital (Cable)", "Id": LINEUP} in lineups
    assert fake_sd.calls("GET", "/headends")[-1].query == {"country": "USA", "postalcode": "10001"}

    # choosing the lineup adds it to the account, then the guide loads
    r = c.post("/LiveTv/ListingProviders", params={"validateListings": "true"},
               json={**provider, "ListingsId": LINEUP})
    assert r.status_code == 200, r.text
    assert fake_sd.account_lineups == [LINEUP] and len(fake_sd.calls("PUT", f"/lineups/{LINEUP}")) == 1
    assert r.json()["Password"] == sha1  # an edit without pw keeps the hash

    channels = {ch["Name"]: ch for ch in c.get("/LiveTv/Channels").json()["Items"]}
    programs = _wait_for(lambda: c.get("/LiveTv/Programs").json()["Items"])
    by_channel = {}
    for p in programs:
        by_channel.setdefault(p["ChannelId"], []).append(p)
    # stations 10001 (channel 004) and 10002 (002) match tuner channels 4 and 2 by number
    assert set(by_channel) == {channels["NBC"]["Id"], channels["CBS"]["Id"]}
    days = guide_days(2)
    md5_request = fake_sd.calls("POST", "/schedules/md5")[-1].body
    assert sorted(e["stationID"] for e in md5_request) == ["10001", "10002", "10003"]
    assert all(e["date"] == days for e in md5_request)
    starts = {p["StartDate"][:10] for p in by_channel[channels["NBC"]["Id"]]}
    assert starts == set(days)  # two days of schedules, today's past hours trimmed
    now = datetime.now(UTC)
    expected = sum(1 for day in days for hour in range(24)
                   if datetime.fromisoformat(day).replace(tzinfo=UTC) + timedelta(hours=hour + 1)
                   >= now - timedelta(hours=6))
    assert len(by_channel[channels["NBC"]["Id"]]) == expected

    news = c.get("/LiveTv/Programs", params={"isNews": "true", "channelIds": channels["NBC"]["Id"]}).json()["Items"]
    assert news and all(p["Name"] == "Evening News" for p in news)
    episode = next(p for p in by_channel[channels["CBS"]["Id"]] if p.get("EpisodeTitle"))
    assert episode["Name"] == "Show 10002" and episode["ParentIndexNumber"] == 2
    assert episode["Overview"].startswith("Programme EP10002")
    assert episode["EpisodeTitle"] == f"Episode {episode['IndexNumber']}"
    # artwork: the Iconic 2x3 image of each programme, by its 10-character id
    guide = server.ctx.livetv.guide
    icon = guide.by_id[episode["Id"]].icon
    assert re.fullmatch(re.escape(fake_sd.api_url) + r"/image/assets/pEP10002\d{3}_iconic\.jpg", icon), icon
    assert fake_sd.calls("POST", "/metadata/programs/")

    # the unmapped station is mapped by hand through the same ChannelMappings path XMLTV uses
    options = c.get("/LiveTv/ChannelMappingOptions", params={"providerId": provider["Id"]}).json()
    assert {p["Id"] for p in options["ProviderChannels"]} == {"10001", "10002", "10003"}
    assert options["ProviderName"] == "Schedules Direct"
    r = c.post("/LiveTv/ChannelMappings", json={"ProviderId": provider["Id"], "TunerChannelId": "55",
                                                "ProviderChannelId": "10003"})
    assert r.status_code == 200 and r.json()["ProviderChannelName"] == "Unmapped Station"
    local = c.get("/LiveTv/Programs", params={"channelIds": channels["Local Access"]["Id"]}).json()
    assert local["TotalRecordCount"] == expected

    # an unchanged service: the refresh asks for md5s only, not schedules or programmes again
    schedules_before = len(fake_sd.calls("POST", "/schedules"))
    programs_before = len(fake_sd.calls("POST", "/programs"))
    r = c.get("/ScheduledTasks", params={"isHidden": "false"})
    task = next(t for t in r.json() if t["Key"] == "RefreshGuide")
    md5_before = len(fake_sd.calls("POST", "/schedules/md5"))
    assert c.post(f"/ScheduledTasks/Running/{task['Id']}").status_code == 204
    _wait_for(lambda: len(fake_sd.calls("POST", "/schedules/md5")) > md5_before)
    _wait_for(lambda: c.get(f"/ScheduledTasks/{task['Id']}").json()["State"] == "Idle")
    assert len(fake_sd.calls("POST", "/schedules")) == schedules_before
    assert len(fake_sd.calls("POST", "/programs")) == programs_before
    assert c.get("/LiveTv/Programs").json()["TotalRecordCount"] == 3 * expected

    # the service expires the token early: one new login, and the refresh goes through
    fake_sd.current_token = "sd-token-2"
    fake_sd.revision = 2  # and the schedules changed: they are fetched again
    logins = len(fake_sd.calls("POST", "/token"))
    assert c.post(f"/ScheduledTasks/Running/{task['Id']}").status_code == 204
    _wait_for(lambda: len(fake_sd.calls("POST", "/schedules")) > schedules_before)
    _wait_for(lambda: c.get(f"/ScheduledTasks/{task['Id']}").json()["State"] == "Idle")
    assert len(fake_sd.calls("POST", "/token")) == logins + 1
    assert fake_sd.calls("POST", "/schedules")[-1].headers["token"] == "sd-token-2"
    assert len(fake_sd.calls("POST", "/programs")) == programs_before + 1  # new md5s: programmes again
    assert c.get("/LiveTv/Programs").json()["TotalRecordCount"] == 3 * expected


def test_account_errors_are_clear(server, tmp_path):
    expired = FakeSchedulesDirect(expires=datetime.now(UTC).date() - timedelta(days=3)).start()
    full = FakeSchedulesDirect(max_lineups=0).start()
    try:
        c = _setup(server, tmp_path, expired)
        r = c.post("/LiveTv/ListingProviders", params={"validateLogin": "true", "pw": SD_PASSWORD},
                   json={"Type": "SchedulesDirect", "Username": SD_USER})
        assert r.status_code == 400 and "expired" in r.json()["detail"]

        assert c.post("/System/Configuration/schedulesdirect", json={"BaseUrl": full.api_url}).status_code == 204
        r = c.post("/LiveTv/ListingProviders", params={"validateLogin": "true", "validateListings": "true",
                                                        "pw": SD_PASSWORD},
                   json={"Type": "SchedulesDirect", "Username": SD_USER, "ListingsId": LINEUP})
        assert r.status_code == 400 and "maximum number of lineups" in r.json()["detail"]
        assert not c.get("/System/Configuration/livetv").json().get("ListingProviders")
    finally:
        expired.stop()
        full.stop()


def test_countries_when_the_service_is_down(server):
    from tests.metadata.fakes import closed_port

    with server.admin() as c:
        c.post("/System/Configuration/schedulesdirect", json={"BaseUrl": f"http://127.0.0.1:{closed_port()}/20141201"})
        r = c.get("/LiveTv/ListingProviders/SchedulesDirect/Countries")
    assert r.status_code == 503 and "unreachable" in r.json()["detail"]
