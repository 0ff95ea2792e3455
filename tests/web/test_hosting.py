"""Where the web client comes from (lookup order, switches), the page shown without one, and CORS."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import httpx
import pytest

from server.web.locate import bundle_web_dirs, locate_web_client
from tests.conftest import complete_wizard, start_server, stop_server
from tests.web.conftest import make_dist

# -- lookup order -------------------------------------------------------------------------------


def test_lookup_order(tmp_path: Path) -> None:
    data = tmp_path / "data"
    option, bundle = make_dist(tmp_path / "option"), make_dist(tmp_path / "bundle")
    make_dist(data / "web")
    found = locate_web_client(data, option, True, [bundle])
    assert (found.folder, found.source) == (option.resolve(), "option")
    found = locate_web_client(data, None, True, [tmp_path / "nothing", bundle])
    assert (found.folder, found.source) == (bundle.resolve(), "bundle")
    found = locate_web_client(data, None, True, [tmp_path / "nothing"])
    assert (found.folder, found.source) == ((data / "web").resolve(), "data")
    # an explicit folder without index.html is reported, not replaced by another
    found = locate_web_client(data, tmp_path / "nothing", True, [bundle])
    assert found.folder is None and "no index.html" in found.reason
    found = locate_web_client(data, option, False, [bundle])
    assert found.folder is None and "turned off" in found.reason
    assert locate_web_client(tmp_path / "empty", None, True, []).source == "none"


def test_bundle_folders_of_a_frozen_build(tmp_path: Path, monkeypatch) -> None:
    assert bundle_web_dirs() == []  # not frozen
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "reelroom" / "reelroom-server"))
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path / "reelroom" / "_internal"), raising=False)
    assert bundle_web_dirs() == [(tmp_path / "reelroom" / "web").resolve(), tmp_path / "reelroom" / "_internal" / "web"]


def test_server_prefers_web_dir_over_the_data_folder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_dist(data / "web", marker="from-data")
    live = start_server(data, web_dir=make_dist(tmp_path / "opt", marker="from-option"))
    try:
        assert "from-option" in httpx.get(live.url + "/web/").text
    finally:
        stop_server(live)
    live = start_server(data)
    try:
        assert "from-data" in httpx.get(live.url + "/web/").text
    finally:
        stop_server(live)


def test_hosting_switched_off_by_option_and_by_setting(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_dist(data / "web")
    live = start_server(data, host_web=False)
    try:
        r = httpx.get(live.url + "/web/")
        assert r.status_code == 200 and "turned off" in r.text and "Test web client" not in r.text
        assert httpx.get(live.url + "/web/runtime.bundle.js").status_code == 404
    finally:
        stop_server(live)
    live = start_server(data)
    try:
        complete_wizard(live)
        assert "Test web client" in httpx.get(live.url + "/web/").text
        with live.admin() as admin:
            assert admin.post("/System/Configuration/web", json={"HostWebClient": False}).status_code == 204
            assert admin.post("/System/Configuration/web", json={"HostWebClient": "no"}).status_code == 400
        import time

        time.sleep(1.1)  # the folder lookup stands for a second
        assert "turned off" in httpx.get(live.url + "/web/").text
    finally:
        stop_server(live)


def test_cli_flags_and_environment(tmp_path: Path, monkeypatch) -> None:
    from app.desktop_main import parse_args
    from app.server_main import build_parser, options_from

    parser = build_parser("reelroom-server", "")
    opts = options_from(parser.parse_args(["--data-dir", str(tmp_path), "--port", "0", "--web-dir", str(tmp_path / "w")]))
    assert opts.web_dir == (tmp_path / "w").resolve() and opts.host_web is True
    assert options_from(parser.parse_args(["--data-dir", str(tmp_path), "--port", "0", "--no-web"])).host_web is False
    monkeypatch.setenv("REELROOM_WEB_DIR", str(tmp_path / "env"))
    monkeypatch.setenv("REELROOM_NO_WEB", "1")
    parser = build_parser("reelroom-server", "")
    opts = options_from(parser.parse_args(["--data-dir", str(tmp_path), "--port", "0"]))
    assert opts.web_dir == (tmp_path / "env").resolve() and opts.host_web is False
    # the desktop app takes the same flags
    args = parse_args(["--data-dir", str(tmp_path), "--web-dir", str(tmp_path / "d"), "--no-web"])
    assert args.web_dir == tmp_path / "d" and args.no_web is True
    assert parse_args(["--install-web", "x.tar.xz", "--sha256", "a" * 64]).install_web == "x.tar.xz"


# -- the page without a web client ---------------------------------------------------------------


def test_page_without_a_web_client(fresh_server) -> None:
    r = httpx.get(fresh_server.url + "/", follow_redirects=True)
    assert r.status_code == 200 and r.headers["content-type"] == "text/html; charset=utf-8"
    page = r.text
    name = fresh_server.ctx.server_name()
    assert f"<h1>{name}</h1>" in page
    host = fresh_server.url.removeprefix("http://")
    # reached on loopback, the page shows this machine's LAN address (or loopback if it has none)
    assert re.search(r'class="url">http://[\d.\[\]:a-f]+:' + host.split(":")[1] + "<", page)
    svg = re.search(r"<svg[^>]*class=\"segno\".*?</svg>", page, re.S)
    assert svg and "<path" in svg.group(0)  # a QR code, drawn server-side
    for words in ("Jellyfin for Android TV", "Swiftfin", "Finamp", "Kodi", "Jellyfin Media Player",
                  "reelroom-server --install-web", "Install web app", "v10.10.7"):
        assert words in page, words
    assert "<script" not in page.lower()
    # reached on another name, that name is the address (and it is escaped)
    r = httpx.get(fresh_server.url + "/web/", headers={"Host": "media.local:8096"})
    assert 'class="url">http://media.local:8096<' in r.text
    r = httpx.get(fresh_server.url + "/web/", headers={"Host": "<b>x"})
    assert "<b>x" not in r.text and "&lt;b&gt;x" in r.text
    r = httpx.get(fresh_server.url + "/web/", headers={"Host": "h" * 3000})  # too long for a QR code
    assert r.status_code == 200 and "Add the web app" in r.text
    assert httpx.get(fresh_server.url + "/web/index.html").text.count("Add the web app") == 1
    assert httpx.get(fresh_server.url + "/web/main.js").status_code == 404


def test_page_escapes_the_server_name(server) -> None:
    with server.admin() as admin:
        cfg = admin.get("/System/Configuration").json()
        cfg["ServerName"] = "<script>alert(1)</script>Den"
        assert admin.post("/System/Configuration", json=cfg).status_code == 204
    page = httpx.get(server.url + "/web/").text
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;Den" in page


# -- CORS ------------------------------------------------------------------------------------------


def test_cors_default_allows_any_origin_everywhere(web_server) -> None:
    for path in ("/System/Info/Public", "/web/", "/web/missing.js", "/Users/Me", "/Items/nope"):
        r = httpx.get(web_server.url + path, headers={"Origin": "https://elsewhere.example"})
        assert r.headers["access-control-allow-origin"] == "*", path
    assert httpx.get(web_server.url + "/System/Info/Public").headers["access-control-allow-origin"] == "*"


def test_cors_preflight(web_server) -> None:
    requested = "authorization, content-type, x-emby-authorization, x-emby-token, x-mediabrowser-token"
    r = httpx.options(web_server.url + "/Users/AuthenticateByName", headers={
        "Origin": "https://elsewhere.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": requested})
    assert r.status_code == 204
    assert r.headers["access-control-allow-origin"] == "*"
    assert r.headers["access-control-allow-methods"] == "POST"
    assert r.headers["access-control-allow-headers"] == requested
    # any path, any method: a preflight never reaches routing or the token check
    r = httpx.options(web_server.url + "/Items/0123/Refresh?x=1", headers={
        "Origin": "http://tv.local", "Access-Control-Request-Method": "delete"})
    assert r.status_code == 204 and r.headers["access-control-allow-methods"] == "DELETE"
    # header values that are not tokens are not echoed
    r = httpx.options(web_server.url + "/System/Info", headers={
        "Origin": "http://tv.local", "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "x-a\tx-b(evil)"})
    assert "access-control-allow-headers" not in r.headers


def test_cors_with_listed_hosts(server) -> None:
    with server.admin() as admin:
        cfg = admin.get("/System/Configuration").json()
        cfg["CorsHosts"] = ["https://app.example", "http://tv.local:8080"]
        assert admin.post("/System/Configuration", json=cfg).status_code == 204
    url = server.url + "/System/Info/Public"
    r = httpx.get(url, headers={"Origin": "https://app.example"})
    assert r.headers["access-control-allow-origin"] == "https://app.example"
    assert r.headers["access-control-allow-credentials"] == "true"
    assert "Origin" in r.headers.get_list("vary")
    r = httpx.get(url, headers={"Origin": "HTTP://TV.local:8080"})
    assert r.headers["access-control-allow-origin"] == "HTTP://TV.local:8080"
    r = httpx.get(url, headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in r.headers and r.status_code == 200
    assert "access-control-allow-origin" not in httpx.get(url).headers
    pre = {"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization"}
    r = httpx.options(url, headers={"Origin": "https://app.example", **pre})
    assert r.status_code == 204 and r.headers["access-control-allow-origin"] == "https://app.example"
    assert r.headers["access-control-allow-headers"] == "authorization"
    r = httpx.options(url, headers={"Origin": "https://evil.example", **pre})
    assert r.status_code == 204 and "access-control-allow-origin" not in r.headers
    assert "access-control-allow-methods" not in r.headers


@pytest.mark.parametrize("hosts", [[], ["*"], ["https://x.example", "*"]])
def test_cors_any_origin_forms(hosts) -> None:
    from server.web.cors import CorsPolicy

    policy = CorsPolicy(lambda: hosts)
    assert policy.response_headers("https://anything.example") == [(b"access-control-allow-origin", b"*")]


def test_cors_preflight_does_not_change_the_shared_any_origin_headers() -> None:
    from server.web.cors import CorsPolicy

    policy = CorsPolicy(lambda: ["*"])
    pre = policy.preflight_headers("https://a.example", "POST", "authorization")
    assert (b"access-control-allow-methods", b"POST") in pre
    # the headers of an ordinary response (one list for every response under this policy) are untouched
    assert policy.response_headers("https://a.example") == [(b"access-control-allow-origin", b"*")]
