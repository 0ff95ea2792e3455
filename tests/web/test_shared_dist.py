"""The real jellyfin-web 10.10.7 dist (../shared, or REELROOM_WEB_DIST): installed with its published
sha256, then served the way a browser's first load asks for it. Skips when the dist is absent."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from server.web.install import install_web
from tests.conftest import start_server, stop_server
from tests.web.conftest import SHARED_DIST_SHA256, require_shared_dist

IMMUTABLE = "public, max-age=31536000, immutable"


def test_real_dist_installs_and_serves(tmp_path: Path) -> None:
    dist = require_shared_dist()
    data = tmp_path / "data"
    result = install_web(dist, data, SHARED_DIST_SHA256 if dist.name.endswith("10.10.7-dist.tar.xz") else None)
    assert result.files > 2000 and (data / "web" / "index.html").is_file()
    live = start_server(data)
    try:
        index = httpx.get(live.url + "/", follow_redirects=True)
        assert index.status_code == 200 and index.headers["cache-control"] == "no-cache"
        scripts = re.findall(r'<script[^>]* src="([^"]+)"', index.text)
        styles = re.findall(r'<link href="([^"]+\.css[^"]*)" rel="stylesheet"', index.text)
        assert scripts and styles
        with httpx.Client(base_url=live.url + "/web/", timeout=60) as c:
            for ref in scripts + styles:
                r = c.get(ref, headers={"Accept-Encoding": "br"})
                assert r.status_code == 200, ref
                # named with a hash, or with the build hash as the query; the service worker never
                expected = "no-cache" if ref.startswith("serviceworker.js") else IMMUTABLE
                assert r.headers["cache-control"] == expected, ref
                assert r.headers["content-type"].startswith(("text/javascript", "text/css")), ref
                if int(r.headers["content-length"]) > 2048:
                    assert r.headers.get("content-encoding") == "br", ref
            config = c.get("config.json")
            assert config.headers["cache-control"] == "no-cache" and "multiserver" in config.json()
            for name in ("libraries/libarchive.wasm", "favicon.ico", "touchicon.png"):
                assert c.get(name).status_code == 200, name
            wasm = c.head("libraries/libarchive.wasm")
            assert wasm.headers["content-type"] == "application/wasm"
    finally:
        stop_server(live)
