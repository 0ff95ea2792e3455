"""System and admin basics: info, logs, branding, localization, bitrate test, client logs,
activity log, configuration, environment, tasks, plugins, restart and shutdown."""

from __future__ import annotations

import time

import httpx

from tests.conftest import auth_header
from tests.mediagen import make_image


def test_public_info_reports_jellyfin_and_our_id(server):
    public = httpx.get(server.url + "/System/Info/Public").json()
    assert public["ProductName"] == "Jellyfin Server"
    assert public["Version"] == "10.10.7"
    assert public["Id"] == server.ctx.system_id
    assert (server.data_dir / "device.txt").read_text().strip() == public["Id"]
    assert public["OperatingSystem"] == ""
    with server.admin() as c:
        full = c.get("/System/Info").json()
    assert full["Id"] == public["Id"] and full["LogPath"].endswith("log")


def test_ping_answers_the_product_name(server):
    for method in ("GET", "POST"):
        r = httpx.request(method, server.url + "/System/Ping")
        assert r.status_code == 200 and r.json() == "Jellyfin Server"


def test_logs_are_listed_and_read_by_name_only(server):
    with server.admin() as c:
        logs = c.get("/System/Logs").json()
        names = [entry["Name"] for entry in logs]
        assert "reelroom.log" in names
        text = c.get("/System/Logs/Log", params={"name": "reelroom.log"})
        assert text.status_code == 200 and "[INF]" in text.text
        for bad in ("../device.txt", "/etc/passwd", "..", "sub/x.log"):
            assert c.get("/System/Logs/Log", params={"name": bad}).status_code == 400, bad
        assert c.get("/System/Logs/Log", params={"name": "nope.log"}).status_code == 404


def test_log_download_honours_range_requests(server):
    """The desktop log viewer tails the log by asking only for what it has not read yet."""
    with server.admin() as c:
        whole = c.get("/System/Logs/Log", params={"name": "reelroom.log"})
        assert whole.status_code == 200 and whole.headers["accept-ranges"] == "bytes"
        assert whole.headers["content-type"].startswith("text/plain")
        size = len(whole.content)
        part = c.get("/System/Logs/Log", params={"name": "reelroom.log"}, headers={"Range": "bytes=10-"})
        assert part.status_code == 206
        assert part.headers["content-range"].startswith("bytes 10-")
        assert part.content[: size - 10] == whole.content[10:]
        past = c.get("/System/Logs/Log", params={"name": "reelroom.log"}, headers={"Range": "bytes=99999999-"})
        assert past.status_code == 416
        assert past.headers["content-range"].startswith("bytes */")


def test_branding_content_types(server):
    r = httpx.get(server.url + "/Branding/Configuration")
    assert r.headers["content-type"] == "application/json; charset=utf-8"
    for path in ("/Branding/Css", "/Branding/Css.css"):
        assert httpx.get(server.url + path).headers["content-type"].startswith("text/css")
    with server.admin() as c:
        branding = c.get("/System/Configuration/branding").json()
        branding["CustomCss"] = "body { color: red; }"
        assert c.post("/System/Configuration/branding", json=branding).status_code == 204
    css = httpx.get(server.url + "/Branding/Css.css")
    assert css.status_code == 200 and css.text == "body { color: red; }"


def test_splashscreen_default_upload_delete(server, tmp_path):
    r = httpx.get(server.url + "/Branding/Splashscreen")
    assert r.status_code == 200 and r.content.startswith(b"\x89PNG")
    jpg = make_image(tmp_path / "splash.jpg", 64, 36).read_bytes()
    with server.admin() as c:
        assert c.post("/Branding/Splashscreen", content=jpg, headers={"Content-Type": "image/jpeg"}).status_code == 204
        assert httpx.get(server.url + "/Branding/Splashscreen").content == jpg
        assert c.post("/Branding/Splashscreen", content=b"not an image",
                      headers={"Content-Type": "image/png"}).status_code == 400
        assert c.delete("/Branding/Splashscreen").status_code == 204
    assert httpx.get(server.url + "/Branding/Splashscreen").content.startswith(b"\x89PNG")


def test_bitrate_test_bounds(server):
    with server.admin() as c:
        r = c.get("/Playback/BitrateTest", params={"size": 500000})
        assert r.status_code == 200
        assert r.headers["content-type"] == "application/octet-stream"
        assert len(r.content) >= 500000
        for bad in (0, -1, 1_000_000_000):
            assert c.get("/Playback/BitrateTest", params={"size": bad}).status_code == 400


def test_robots_redirects_and_root_redirects(server):
    assert httpx.get(server.url + "/robots.txt").status_code == 302
    assert httpx.get(server.url + "/").status_code == 302


def test_localization_lists_are_real(server):
    with server.admin() as c:
        countries = c.get("/Localization/Countries").json()
        cultures = c.get("/Localization/Cultures").json()
        options = c.get("/Localization/Options").json()
        ratings = c.get("/Localization/ParentalRatings").json()
    assert any(x["TwoLetterISORegionName"] == "DE" for x in countries)
    assert any(x["ThreeLetterISOLanguageName"] == "eng" for x in cultures)
    assert any(x["Value"] == "en-US" for x in options)
    assert {"PG-13", "R"} <= {x["Name"] for x in ratings}


def test_client_log_upload_limit_and_switch(server):
    with server.admin() as c:
        r = c.post("/ClientLog/Document", content=b"line one\nline two\n", headers={"Content-Type": "text/plain"})
        assert r.status_code == 200
        name = r.json()["FileName"]
        assert (server.data_dir / "log" / name).read_bytes() == b"line one\nline two\n"
        big = c.post("/ClientLog/Document", content=b"x" * (1024 * 1024 + 1), headers={"Content-Type": "text/plain"})
        assert big.status_code == 413
        server.ctx.config.update_server(AllowClientLogUpload=False)
        assert c.post("/ClientLog/Document", content=b"x", headers={"Content-Type": "text/plain"}).status_code == 403



def test_client_log_names_stay_in_the_log_folder(server):
    """The file name is made of the caller's client, version and device: only safe characters."""
    headers = auth_header(None, device="../../x/y")
    headers["Authorization"] = headers["Authorization"].replace('Client="', 'Client="../a/')
    with httpx.Client(base_url=server.url, headers=headers, timeout=30) as c:
        r = c.post("/Users/AuthenticateByName", json={"Username": "admin", "Pw": "s3cret!"})
        assert r.status_code == 200, r.text
        c.headers["Authorization"] += f', Token="{r.json()["AccessToken"]}"'
        r = c.post("/ClientLog/Document", content=b"from a strange device", headers={"Content-Type": "text/plain"})
    assert r.status_code == 200, r.text
    name = r.json()["FileName"]
    assert "/" not in name and "\\" not in name and name.endswith(".log")
    assert (server.data_dir / "log" / name).read_bytes() == b"from a strange device"

def test_activity_log_records_and_filters(server):
    with server.admin() as c:
        c.post("/Users/New", json={"Name": "eve"})
        c.post("/Auth/Keys", params={"app": "Cron"})
        entries = c.get("/System/ActivityLog/Entries").json()
        types = [e["Type"] for e in entries["Items"]]
        assert {"ServerStarted", "AuthenticationSucceeded", "UserCreated", "ApiKeyCreated"} <= set(types)
        with_user = c.get("/System/ActivityLog/Entries", params={"hasUserId": "true"}).json()["Items"]
        assert with_user and all(e["UserId"] != "0" * 32 for e in with_user)
        page = c.get("/System/ActivityLog/Entries", params={"startIndex": 1, "limit": 2}).json()
        assert len(page["Items"]) == 2 and page["TotalRecordCount"] == entries["TotalRecordCount"]


def test_configuration_round_trip_and_named_sections(server):
    with server.admin() as c:
        cfg = c.get("/System/Configuration").json()
        assert cfg["IsStartupWizardCompleted"] is True
        cfg["ServerName"] = "Living Room"
        assert c.post("/System/Configuration", json=cfg).status_code == 204
        assert httpx.get(server.url + "/System/Info/Public").json()["ServerName"] == "Living Room"
        enc = c.get("/System/Configuration/encoding").json()
        assert enc["HardwareAccelerationType"] == "none"
        enc["HardwareAccelerationType"] = "vaapi"
        assert c.post("/System/Configuration/encoding", json=enc).status_code == 204
        assert c.get("/System/Configuration/Encoding").json()["HardwareAccelerationType"] == "vaapi"
        assert c.get("/System/Configuration/nosuchthing").status_code == 404
        assert c.post("/System/Configuration/encoding", content=b"[1,2", headers={
            "Content-Type": "application/json"}).status_code == 400
    # Saved to disk: a restart keeps it.
    assert (server.data_dir / "config" / "system.json").read_text().count("Living Room") == 1


def test_environment_can_be_confined_to_allowed_roots(server, tmp_path):
    media = tmp_path / "media"
    (media / "Movies").mkdir(parents=True)
    (media / "Movies" / "a.mkv").write_bytes(b"x")
    with server.admin() as c:
        assert c.post("/System/Configuration/filesystem",
                      json={"RestrictToAllowedRoots": True, "AllowedRoots": []}).status_code == 400
        assert c.post("/System/Configuration/filesystem",
                      json={"RestrictToAllowedRoots": True, "AllowedRoots": ["relative"]}).status_code == 400
        assert c.post("/System/Configuration/filesystem",
                      json={"RestrictToAllowedRoots": True, "AllowedRoots": [str(media)]}).status_code == 204
        dirs = c.get("/Environment/DirectoryContents", params={"path": str(media)}).json()
        assert [d["Name"] for d in dirs] == ["Movies"]
        files = c.get("/Environment/DirectoryContents", params={"path": str(media / "Movies"),
                                                                 "includeFiles": "true"}).json()
        assert [f["Name"] for f in files] == ["a.mkv"]
        assert c.get("/Environment/DirectoryContents", params={"path": "/etc"}).status_code == 403
        assert c.get("/Environment/DirectoryContents", params={"path": str(media / ".." / "..")}).status_code == 403
        assert c.get("/Environment/DirectoryContents", params={"path": "relative/path"}).status_code == 400
        assert c.post("/Environment/ValidatePath", json={"Path": str(media / "Movies")}).status_code == 204
        assert c.post("/Environment/ValidatePath", json={"Path": str(media / "missing")}).status_code == 404
        assert c.get("/Environment/ParentPath", params={"path": str(media / "Movies")}).json() == str(media)
        assert [d["Path"] for d in c.get("/Environment/Drives").json()] == [str(media)]
        assert c.post("/Library/VirtualFolders", params={"name": "Etc", "paths": ["/etc"]}).status_code == 403


def test_an_administrator_may_use_any_existing_folder_by_default(server, tmp_path):
    media = tmp_path / "anywhere" / "Movies"  # under /tmp: refused before, as /home, /opt or /movies were
    media.mkdir(parents=True)
    (media / "a.mkv").write_bytes(b"x")
    with server.admin() as c:
        assert c.get("/System/Configuration/filesystem").json() == {"RestrictToAllowedRoots": False,
                                                                     "AllowedRoots": []}
        drives = [d["Path"] for d in c.get("/Environment/Drives").json()]
        assert drives[0] == "/"
        names = [d["Name"] for d in c.get("/Environment/DirectoryContents", params={"path": "/"}).json()]
        assert "tmp" in names and "etc" in names
        files = c.get("/Environment/DirectoryContents", params={"path": str(media), "includeFiles": "true"}).json()
        assert [f["Name"] for f in files] == ["a.mkv"]
        assert c.get("/Environment/ParentPath", params={"path": str(media)}).json() == str(media.parent)
        root = c.get("/Environment/ParentPath", params={"path": "/"})
        assert root.status_code == 204 and not root.content  # a root has no parent (ASP.NET: null is 204)
        assert c.post("/Environment/ValidatePath", json={"Path": str(media)}).status_code == 204
        r = c.post("/Library/VirtualFolders", params={"name": "Anywhere", "collectionType": "movies",
                                                      "paths": [str(media)], "refreshLibrary": "false"})
        assert r.status_code == 204, r.text
        assert c.post("/Library/VirtualFolders", params={"name": "Missing", "paths": [str(tmp_path / "nope")]}
                      ).status_code == 404
    with server.client() as anon:  # the folder browser stays an administrator's tool
        assert anon.get("/Environment/DirectoryContents", params={"path": "/"}).status_code == 401


def test_scheduled_tasks_run_and_keep_results(server):
    with server.admin() as c:
        tasks = c.get("/ScheduledTasks").json()
        keys = {t["Key"] for t in tasks}
        assert {"CleanLogFiles", "DeleteTranscodeFiles", "OptimizeDatabaseTask"} <= keys
        task = next(t for t in tasks if t["Key"] == "OptimizeDatabaseTask")
        assert c.post(f"/ScheduledTasks/Running/{task['Id']}").status_code == 204
        for _ in range(100):
            info = c.get(f"/ScheduledTasks/{task['Id']}").json()
            if info["State"] == "Idle" and info.get("LastExecutionResult"):
                break
            time.sleep(0.05)
        assert info["LastExecutionResult"]["Status"] == "Completed"
        assert c.post(f"/ScheduledTasks/{task['Id']}/Triggers",
                      json=[{"Type": "IntervalTrigger", "IntervalTicks": 36000000000}]).status_code == 204
        assert c.get(f"/ScheduledTasks/{task['Id']}").json()["Triggers"][0]["IntervalTicks"] == 36000000000
        assert c.post(f"/ScheduledTasks/{task['Id']}/Triggers", json=[{"Type": "Sometimes"}]).status_code == 400
        assert c.get("/ScheduledTasks/nope").status_code == 404


def test_plugins_list_the_built_in_providers_and_packages_need_a_repository(server):
    assert httpx.get(server.url + "/Plugins").status_code == 401
    with server.admin() as c:
        plugins = c.get("/Plugins").json()
        assert "TheMovieDb" in {p["Name"] for p in plugins} and {p["Status"] for p in plugins} == {"Active"}
        assert c.get("/Packages").json() == []  # no repository is configured
        assert c.get("/web/ConfigurationPages", params={"enableInMainMenu": "true"}).json() == []
    assert httpx.get(server.url + "/web/ConfigurationPage", params={"name": "missing"}).status_code == 404


def test_time_sync_and_wake_on_lan_info(server):
    r = httpx.get(server.url + "/GetUtcTime").json()
    assert r["RequestReceptionTime"] <= r["ResponseTransmissionTime"]
    with server.admin() as c:
        info = c.get("/System/WakeOnLanInfo").json()
    assert all(len(i["MacAddress"]) == 12 and i["Port"] == 9 for i in info)


def test_restart_really_restarts(server):
    old_ctx = server.ctx
    with server.admin() as c:
        assert c.post("/System/Restart").status_code == 204
    deadline = time.time() + 30
    while time.time() < deadline and (server.ctx is old_ctx or not server.runner.ready.is_set()):
        time.sleep(0.05)
    assert server.ctx is not old_ctx
    with server.admin() as c:  # the token survives a restart
        assert c.get("/Users/Me").status_code == 200


def test_shutdown_really_stops(server):
    with server.admin() as c:
        assert c.post("/System/Shutdown").status_code == 204
    server.thread.join(20)
    assert not server.thread.is_alive()
