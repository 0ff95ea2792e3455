"""Live TV: tuner hosts as Jellyfin's tests expect, channels from an M3U playlist."""

from __future__ import annotations

import httpx

PLAYLIST = """#EXTM3U
#EXTINF:-1 tvg-id="one" tvg-chno="1" tvg-logo="http://logo.invalid/1.png" group-title="News",Channel One
http://127.0.0.1:9/one.ts
#EXTINF:-1 tvg-chno="2",Channel Two
http://127.0.0.1:9/two.ts
"""


def test_tuner_hosts_and_channels(server, tmp_path):
    m3u = tmp_path / "tv" / "channels.m3u"
    m3u.parent.mkdir()
    m3u.write_text(PLAYLIST, encoding="utf-8")
    assert httpx.post(server.url + "/LiveTv/TunerHosts", json={"Type": "m3u", "Url": str(m3u)}).status_code == 401
    with server.admin() as c:
        c.post("/System/Configuration/filesystem", json={"AllowedRoots": [str(tmp_path)]})
        r = c.post("/LiveTv/TunerHosts", json={"Type": "m3u", "Url": str(m3u)})
        assert r.status_code == 200
        tuner = r.json()
        assert tuner["Type"] == "m3u" and tuner["Url"] == str(m3u) and tuner["Id"]
        assert c.post("/LiveTv/TunerHosts", json={"Type": "notatuner", "Url": str(m3u)}).status_code == 400
        assert c.post("/LiveTv/TunerHosts", json={"Type": "m3u", "Url": str(tmp_path / "none.m3u")}).status_code == 404
        info = c.get("/LiveTv/Info").json()
        assert info["IsEnabled"] is True
        channels = c.get("/LiveTv/Channels").json()
        assert channels["TotalRecordCount"] == 2
        one = channels["Items"][0]
        assert one["Name"] == "Channel One" and one["ChannelNumber"] == "1" and one["Type"] == "TvChannel"
        assert c.get(f"/LiveTv/Channels/{one['Id']}").json()["Name"] == "Channel One"
        assert c.get("/LiveTv/Channels/0123456789abcdef0123456789abcdef").status_code == 404
        assert {t["Id"] for t in c.get("/LiveTv/TunerHosts/Types").json()} == {"m3u", "hdhomerun"}
        assert c.delete("/LiveTv/TunerHosts", params={"id": tuner["Id"]}).status_code == 204
        assert c.delete("/LiveTv/TunerHosts", params={"id": tuner["Id"]}).status_code == 404
        assert c.get("/LiveTv/Channels").json()["TotalRecordCount"] == 0


def test_listing_providers(server, tmp_path):
    xml = tmp_path / "guide.xml"
    xml.write_text("<tv></tv>")
    with server.admin() as c:
        c.post("/System/Configuration/filesystem", json={"AllowedRoots": [str(tmp_path)]})
        r = c.post("/LiveTv/ListingProviders", json={"Type": "xmltv", "Path": str(xml)})
        assert r.status_code == 200
        pid = r.json()["Id"]
        assert c.get("/System/Configuration/livetv").json()["ListingProviders"][0]["Path"] == str(xml)
        assert c.post("/LiveTv/ListingProviders", json={"Type": "teletext"}).status_code == 400
        assert c.delete("/LiveTv/ListingProviders", params={"id": pid}).status_code == 204
