"""The web client at /web/ on a real server: redirects, types, caching headers, ETag/304, HEAD,
ranges, gzip and brotli, traversal (plain, encoded, backslash, symlink) and 404."""

from __future__ import annotations

import gzip
import http.client
import os
from pathlib import Path
from urllib.parse import urlsplit

import brotli
import httpx
import pytest

from tests.web.conftest import BIG_JS, make_dist

IMMUTABLE = "public, max-age=31536000, immutable"


def raw_get(url: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """GET ``path`` exactly as written (httpx would tidy ``..`` and encodings away)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def test_redirects_to_web(web_server) -> None:
    r = httpx.get(web_server.url + "/")
    assert r.status_code == 302 and r.headers["location"] == "/web/"
    r = httpx.get(web_server.url + "/web")
    assert r.status_code == 301 and r.headers["location"] == "/web/"
    r = httpx.get(web_server.url + "/", follow_redirects=True)
    assert r.status_code == 200 and "Test web client v1" in r.text


def test_index_html_served_and_not_cached(web_server) -> None:
    for path in ("/web/", "/web/index.html"):
        r = httpx.get(web_server.url + path)
        assert r.status_code == 200
        assert r.headers["content-type"] == "text/html; charset=utf-8"
        assert r.headers["cache-control"] == "no-cache"
        assert "Test web client v1" in r.text
    r = httpx.get(web_server.url + "/web/config.json")
    assert r.headers["cache-control"] == "no-cache"
    assert r.json()["multiserver"] is False


@pytest.mark.parametrize(("name", "ctype"), [
    ("index.html", "text/html; charset=utf-8"),
    ("runtime.bundle.js", "text/javascript; charset=utf-8"),
    ("main.0123456789abcdef0123.css", "text/css; charset=utf-8"),
    ("config.json", "application/json; charset=utf-8"),
    ("0d2b37694d352e7e4c59.svg", "image/svg+xml"),
    ("a1b2c3d4e5f6a7b8c9d0.woff2", "font/woff2"),
    ("libraries/libarchive.wasm", "application/wasm"),
    ("manifest.webmanifest", "application/manifest+json; charset=utf-8"),
    ("favicon.ico", "image/x-icon"),
    ("touchicon.png", "image/png"),
])
def test_content_types(web_server, dist: Path, name: str, ctype: str) -> None:
    r = httpx.get(f"{web_server.url}/web/{name}", headers={"Accept-Encoding": "identity"})
    assert r.status_code == 200
    assert r.headers["content-type"] == ctype
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.content == (dist / name).read_bytes()


def test_hashed_assets_are_immutable_others_revalidate(web_server) -> None:
    get = lambda p: httpx.get(web_server.url + p, headers={"Accept-Encoding": "identity"})  # noqa: E731
    assert get("/web/main.0123456789abcdef0123.css").headers["cache-control"] == IMMUTABLE
    assert get("/web/a1b2c3d4e5f6a7b8c9d0.woff2").headers["cache-control"] == IMMUTABLE
    # jellyfin-web names its bundles without a hash and adds the build hash as the query
    assert get("/web/runtime.bundle.js?ad3898a0ee3999cd1b87").headers["cache-control"] == IMMUTABLE
    assert get("/web/runtime.bundle.js").headers["cache-control"] == "no-cache"
    assert get("/web/touchicon.png").headers["cache-control"] == "no-cache"


def test_etag_and_304(web_server) -> None:
    url = web_server.url + "/web/main.0123456789abcdef0123.css"
    first = httpx.get(url, headers={"Accept-Encoding": "identity"})
    etag = first.headers["etag"]
    assert etag.startswith('"') and first.headers["last-modified"]
    again = httpx.get(url, headers={"If-None-Match": etag, "Accept-Encoding": "identity"})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == etag and again.headers["cache-control"] == IMMUTABLE
    # the ETag of the identity copy also validates a compressed one (and a weak form matches)
    br = httpx.get(url, headers={"If-None-Match": f"W/{etag}", "Accept-Encoding": "br"})
    assert br.status_code == 304
    assert httpx.get(url, headers={"If-None-Match": '"other"'}).status_code == 200
    since = httpx.get(url, headers={"If-Modified-Since": first.headers["last-modified"],
                                    "Accept-Encoding": "identity"})
    assert since.status_code == 304


def test_etag_changes_when_the_file_changes(web_server, dist: Path) -> None:
    url = web_server.url + "/web/config.json"
    before = httpx.get(url).headers["etag"]
    path = dist / "config.json"
    path.write_text('{"multiserver": true}')
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 5_000_000_000))
    r = httpx.get(url, headers={"If-None-Match": before})
    assert r.status_code == 200 and r.json() == {"multiserver": True} and r.headers["etag"] != before


def test_head(web_server, dist: Path) -> None:
    r = httpx.head(web_server.url + "/web/runtime.bundle.js", headers={"Accept-Encoding": "identity"})
    assert r.status_code == 200 and r.content == b""
    assert int(r.headers["content-length"]) == (dist / "runtime.bundle.js").stat().st_size
    assert r.headers["content-type"] == "text/javascript; charset=utf-8"
    r = httpx.head(web_server.url + "/web/runtime.bundle.js", headers={"Accept-Encoding": "br"})
    assert r.headers["content-encoding"] == "br" and int(r.headers["content-length"]) < len(BIG_JS) / 3
    assert httpx.head(web_server.url + "/web/nope.js").status_code == 404


@pytest.mark.parametrize(("accept", "encoding", "decode"), [
    ("br", "br", brotli.decompress),
    ("gzip", "gzip", gzip.decompress),
    ("gzip, deflate, br", "br", brotli.decompress),
    ("br;q=0, gzip", "gzip", gzip.decompress),
])
def test_compression(web_server, accept, encoding, decode) -> None:
    url = web_server.url + "/web/runtime.bundle.js"
    for _ in range(2):  # made on the first request, from the cache on the second
        with httpx.Client() as c:
            r = c.get(url, headers={"Accept-Encoding": accept})
        assert r.status_code == 200
        assert r.headers["content-encoding"] == encoding
        assert r.headers["vary"] == "Accept-Encoding"
        assert r.headers["etag"].endswith(f'-{encoding}"')
        assert int(r.headers["content-length"]) < len(BIG_JS) / 3
        assert r.text == BIG_JS  # httpx decodes it
        assert decode(_raw_body(url, accept)) == BIG_JS.encode()
    # kept on disk in the data folder's cache
    cached = list((web_server.data_dir / "cache" / "web").rglob("*.br" if encoding == "br" else "*.gz"))
    assert cached


def _raw_body(url: str, accept: str) -> bytes:
    parts = urlsplit(url)
    return raw_get(f"http://{parts.netloc}", parts.path, {"Accept-Encoding": accept})[2]


def test_no_compression_for_identity_binary_or_tiny(web_server) -> None:
    r = httpx.get(web_server.url + "/web/runtime.bundle.js", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in r.headers and r.text == BIG_JS
    r = httpx.get(web_server.url + "/web/a1b2c3d4e5f6a7b8c9d0.woff2", headers={"Accept-Encoding": "br, gzip"})
    assert "content-encoding" not in r.headers  # woff2 is compressed already
    r = httpx.get(web_server.url + "/web/0d2b37694d352e7e4c59.svg", headers={"Accept-Encoding": "br"})
    assert "content-encoding" not in r.headers  # too small to bother


def test_range(web_server, dist: Path) -> None:
    data = (dist / "runtime.bundle.js").read_bytes()
    r = httpx.get(web_server.url + "/web/runtime.bundle.js", headers={"Range": "bytes=10-19", "Accept-Encoding": "br"})
    assert r.status_code == 206 and r.content == data[10:20]
    assert r.headers["content-range"] == f"bytes 10-19/{len(data)}"
    r = httpx.get(web_server.url + "/web/runtime.bundle.js", headers={"Range": f"bytes={len(data) + 5}-"})
    assert r.status_code == 416


@pytest.mark.parametrize("path", [
    "/web/../pyproject.toml",
    "/web/../../../../etc/passwd",
    "/web/%2e%2e/%2e%2e/etc/passwd",
    "/web/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
    "/web/libraries/..%2f..%2fsecret.txt",
    "/web/..%5c..%5csecret.txt",
    "/web/libraries\\..\\..\\secret.txt",
    "/web/%252e%252e/secret.txt",
    "/web/.hidden",
    "/web/libraries/%00.wasm",
])
def test_traversal_is_404(web_server, dist: Path, path: str) -> None:
    (dist.parent / "secret.txt").write_text("secret")
    (dist / ".hidden").write_text("hidden")
    status, _, body = raw_get(web_server.url, path)
    assert status == 404, path
    assert b"secret" not in body and b"root:" not in body and b"hidden" not in body


def test_symlinks_out_of_the_folder_are_404(web_server, dist: Path) -> None:
    secret = dist.parent / "secret.txt"
    secret.write_text("secret")
    outside = dist.parent / "outside"
    outside.mkdir()
    (outside / "x.js").write_text("secret")
    os.symlink(secret, dist / "link.txt")
    os.symlink(outside, dist / "linked-dir")
    os.symlink(dist / "config.json", dist / "inside.json")  # a link that stays inside is fine
    (outside / "index.html").write_text("secret")
    os.symlink(outside / "index.html", dist / "libraries" / "index.html")  # a folder's index.html
    assert httpx.get(web_server.url + "/web/link.txt").status_code == 404
    assert httpx.get(web_server.url + "/web/linked-dir/x.js").status_code == 404
    assert httpx.get(web_server.url + "/web/libraries/").status_code == 404
    r = httpx.get(web_server.url + "/web/inside.json")
    assert r.status_code == 200 and r.json()["multiserver"] is False


def test_missing_is_404_and_api_under_web_still_works(web_server) -> None:
    r = httpx.get(web_server.url + "/web/nope.js")
    assert r.status_code == 404 and r.headers["content-type"].startswith("application/problem+json")
    assert httpx.get(web_server.url + "/web/libraries/").status_code == 404  # a folder without index.html
    assert httpx.get(web_server.url + "/web/ConfigurationPage", params={"name": "x"}).status_code == 404
    assert httpx.post(web_server.url + "/web/index.html").status_code in (404, 405)
    # the API next to it is untouched
    assert httpx.get(web_server.url + "/System/Info/Public").json()["ProductName"] == "Jellyfin Server"


def test_folder_replaced_under_a_running_server(web_server, tmp_path: Path, dist: Path) -> None:
    """A new copy renamed into place is served within a second (install-web swaps folders)."""
    import time

    assert "v1" in httpx.get(web_server.url + "/web/").text
    fresh = make_dist(tmp_path / "fresh", marker="v2")
    os.rename(dist, tmp_path / "old")
    os.rename(fresh, dist)
    deadline = time.monotonic() + 5
    while "v2" not in httpx.get(web_server.url + "/web/").text:
        assert time.monotonic() < deadline
        time.sleep(0.1)
