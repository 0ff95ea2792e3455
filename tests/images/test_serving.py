"""GET/HEAD of item images: sizing in every mode and format, formats from Accept, the disk
cache, ETag/304, Cache-Control, and 404/400 answers."""

from __future__ import annotations

import threading
import uuid

import pytest

from tests.images.conftest import add_item, decode, entry_for, make_picture

MODES = [
    ({"maxWidth": 400}, (400, 600)),
    ({"maxHeight": 300}, (200, 300)),
    ({"width": 250}, (250, 375)),
    ({"height": 150}, (100, 150)),
    ({"width": 300, "height": 200}, (300, 200)),
    ({"fillWidth": 300, "fillHeight": 300}, (300, 300)),
    ({"fillWidth": 200, "fillHeight": 600}, (200, 600)),
    ({"maxWidth": 4000}, (1000, 1500)),  # never enlarged
    ({"maxWidth": 500, "maxHeight": 500}, (333, 500)),
]
FORMATS = {"Jpg": "JPEG", "Png": "PNG", "Webp": "WEBP"}


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_every_sizing_mode_in_every_format(live, poster, fmt):
    item_id, _primary = poster
    with live.client() as c:
        for params, size in MODES:
            r = c.get(f"/Items/{item_id}/Images/Primary", params={**params, "format": fmt, "quality": 80})
            assert r.status_code == 200, (params, r.text)
            img = decode(r.content)
            assert img.size == size, (params, fmt)
            assert img.format == FORMATS[fmt]
            assert r.headers["content-type"] == f"image/{FORMATS[fmt].lower().replace('jpeg', 'jpeg')}"


def test_fill_crops_like_a_cover(live, poster):
    item_id, _ = poster
    with live.client() as c:
        img = decode(c.get(f"/Items/{item_id}/Images/Primary", params={"fillWidth": 300, "fillHeight": 300,
                                                                      "format": "Png"}).content).convert("RGB")
    # 1000x1500 -> 300x450 -> centre crop of 300x300 keeps rows 75..375: the black quadrant
    # (top-left, 150x225 after scaling) now reaches row 150.
    assert img.getpixel((10, 10)) == (0, 0, 0)
    assert img.getpixel((10, 160))[0] > 150
    assert img.getpixel((290, 10))[0] > 150


def test_quality_blur_background_and_indicators(live, poster):
    item_id, _ = poster
    with live.client() as c:
        low = c.get(f"/Items/{item_id}/Images/Primary", params={"maxWidth": 400, "quality": 10})
        high = c.get(f"/Items/{item_id}/Images/Primary", params={"maxWidth": 400, "quality": 95})
        assert len(low.content) < len(high.content)
        blurred = decode(c.get(f"/Items/{item_id}/Images/Primary",
                               params={"maxWidth": 400, "blur": 20, "format": "Png"}).content).convert("RGB")
        r, g, b = blurred.getpixel((200, 300))  # at the quadrant corner: a mix after blurring
        assert 20 < r < 180
        logo = decode(c.get(f"/Items/{item_id}/Images/Logo",
                            params={"backgroundColor": "#00ff00", "format": "Jpg"}).content).convert("RGB")
        red, green, blue = logo.getpixel((300, 150))  # half-transparent red over green
        assert green > 90 and red > 60 and blue < 40
        marked = decode(c.get(f"/Items/{item_id}/Images/Primary", params={
            "maxWidth": 200, "percentPlayed": 50, "unplayedCount": 3, "format": "Png"}).content).convert("RGB")
        assert marked.getpixel((20, 298)) == (82, 181, 75)  # the played part of the bar
        assert marked.getpixel((180, 298)) != marked.getpixel((20, 298))
        assert marked.getpixel((168, 21)) == (82, 181, 75)  # the unplayed-count badge, top right
        barred = decode(c.get(f"/Items/{item_id}/Images/Primary", params={
            "maxWidth": 200, "percentPlayed": 50, "format": "Png"}).content).convert("RGBA")
        assert barred.getpixel((180, 298))[3] == 255  # the bar is blended in, not a transparent hole
        fg = decode(c.get(f"/Items/{item_id}/Images/Primary", params={
            "maxWidth": 200, "foregroundLayer": "0.5", "format": "Png"}).content).convert("RGB")
        assert fg.getpixel((150, 250))[0] < 150  # darkened


def test_format_from_accept_and_source(live, poster):
    item_id, _ = poster
    with live.client() as c:
        r = c.get(f"/Items/{item_id}/Images/Primary", params={"maxWidth": 100}, headers={"Accept": "image/webp,*/*"})
        assert r.headers["content-type"] == "image/webp" and decode(r.content).format == "WEBP"
        assert "Accept" in r.headers.get("vary", "")
        r = c.get(f"/Items/{item_id}/Images/Primary", params={"maxWidth": 100}, headers={"Accept": "image/jpeg"})
        assert decode(r.content).format == "JPEG"
        r = c.get(f"/Items/{item_id}/Images/Logo", params={"maxWidth": 100}, headers={"Accept": "*/*"})
        assert decode(r.content).format == "PNG" and decode(r.content).mode == "RGBA"
        r = c.get(f"/Items/{item_id}/Images/Primary", params={"maxWidth": 100, "format": "Png"},
                  headers={"Accept": "image/webp"})
        assert decode(r.content).format == "PNG"
        # nothing to change: the original file's bytes
        r = c.get(f"/Items/{item_id}/Images/Primary", headers={"Accept": "image/jpeg"})
        assert r.content == open(poster[1]["Path"], "rb").read()


def test_path_style_route(live, poster):
    item_id, primary = poster
    with live.client() as c:
        r = c.get(f"/Items/{item_id}/Images/Primary/0/{primary['Tag']}/Png/200/300/0/0")
        assert r.status_code == 200, r.text
        assert decode(r.content).size == (200, 300) and decode(r.content).format == "PNG"
        h = c.head(f"/Items/{item_id}/Images/Primary/0/{primary['Tag']}/Png/200/300/0/0")
        assert h.status_code == 200 and h.content == b""
        assert h.headers["content-length"] == str(len(r.content))


def test_backdrops_by_index(live, poster):
    item_id, _ = poster
    with live.client() as c:
        first = decode(c.get(f"/Items/{item_id}/Images/Backdrop/0", params={"format": "Png"}).content).convert("RGB")
        second = decode(c.get(f"/Items/{item_id}/Images/Backdrop", params={"imageIndex": 1, "format": "Png"}).content)
        assert first.getpixel((600, 300))[2] > 200
        assert second.convert("RGB").getpixel((600, 300))[0] > 200
        assert c.get(f"/Items/{item_id}/Images/Backdrop/2").status_code == 404


def test_cache_hit_does_not_resize_again(live, poster):
    item_id, _ = poster
    cache = live.ctx.images.cache
    params = {"maxWidth": 321, "format": "Jpg"}
    with live.client() as c:
        before = cache.renders
        first = c.get(f"/Items/{item_id}/Images/Primary", params=params)
        assert cache.renders == before + 1
        second = c.get(f"/Items/{item_id}/Images/Primary", params=params)
        assert cache.renders == before + 1  # served from <data>/cache/images
        assert first.content == second.content
        assert first.headers["etag"] == second.headers["etag"]
        files = list((live.data_dir / "cache" / "images").rglob("*.jpg"))
        assert any(f.read_bytes() == first.content for f in files)
        c.get(f"/Items/{item_id}/Images/Primary", params={**params, "quality": 50})
        assert cache.renders == before + 2  # other options, another rendering


def test_concurrent_requests_render_once(live, poster):
    item_id, _ = poster
    cache = live.ctx.images.cache
    before = cache.renders
    results: list[int] = []

    def fetch() -> None:
        with live.client() as c:
            r = c.get(f"/Items/{item_id}/Images/Primary", params={"maxWidth": 377, "blur": 3})
            results.append(decode(r.content).size[0])

    threads = [threading.Thread(target=fetch) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [377] * 8
    assert cache.renders == before + 1


def test_etag_304_and_cache_control(live, poster):
    item_id, primary = poster
    url = f"/Items/{item_id}/Images/Primary"
    with live.client() as c:
        tagged = c.get(url, params={"maxWidth": 222, "tag": primary["Tag"]})
        assert "max-age=31536000" in tagged.headers["cache-control"]
        untagged = c.get(url, params={"maxWidth": 222})
        assert "no-cache" in untagged.headers["cache-control"]
        stale = c.get(url, params={"maxWidth": 222, "tag": "0" * 32})
        assert stale.status_code == 200 and "no-cache" in stale.headers["cache-control"]
        etag = tagged.headers["etag"]
        renders = live.ctx.images.cache.renders
        again = c.get(url, params={"maxWidth": 222, "tag": primary["Tag"]}, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["etag"] == etag
        assert live.ctx.images.cache.renders == renders
        other = c.get(url, params={"maxWidth": 223}, headers={"If-None-Match": etag})
        assert other.status_code == 200
        modified = tagged.headers["last-modified"]
        assert c.get(url, params={"maxWidth": 222}, headers={"If-Modified-Since": modified}).status_code == 304
        old = "Mon, 01 Jan 2001 00:00:00 GMT"
        assert c.get(url, params={"maxWidth": 222}, headers={"If-Modified-Since": old}).status_code == 200
        assert c.get(url, params={"maxWidth": 222}, headers={"If-Modified-Since": "garbage"}).status_code == 200
        # If-None-Match decides when both are sent
        assert c.get(url, params={"maxWidth": 222}, headers={"If-None-Match": '"nope"',
                                                             "If-Modified-Since": modified}).status_code == 200


def test_head_has_the_headers_and_no_body(live, poster):
    item_id, _ = poster
    with live.client() as c:
        got = c.get(f"/Items/{item_id}/Images/Primary", params={"maxHeight": 90})
        head = c.head(f"/Items/{item_id}/Images/Primary", params={"maxHeight": 90})
        assert head.status_code == 200 and head.content == b""
        for name in ("content-type", "etag", "cache-control", "content-length"):
            assert head.headers[name] == got.headers[name], name
        assert c.head(f"/Items/{item_id}/Images/Primary/0", params={"maxHeight": 90}).headers["etag"] == got.headers["etag"]
        assert c.head(f"/Items/{uuid.uuid4().hex}/Images/Primary").status_code == 404


def test_a_changed_file_is_rendered_again(live):
    path = make_picture(live.extra["art"] / "changing.jpg", (300, 300))
    item_id = add_item(live, [entry_for(path)])
    with live.client() as c:
        first = c.get(f"/Items/{item_id}/Images/Primary", params={"maxWidth": 100})
        make_picture(path, (600, 300))
        second = c.get(f"/Items/{item_id}/Images/Primary", params={"maxWidth": 100})
    assert decode(first.content).size == (100, 100) and decode(second.content).size == (100, 50)
    assert first.headers["etag"] != second.headers["etag"]


def _problem(r, status: int) -> None:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["status"] == status


def test_not_found_and_bad_requests(live, poster):
    item_id, _ = poster
    no_images = add_item(live, [])
    broken = live.extra["art"] / "broken.jpg"
    broken.write_bytes(b"this is not a jpeg")
    broken_file = add_item(live, [{"Type": "Primary", "Path": str(broken), "Tag": "y"}])
    missing_file = add_item(live, [{"Type": "Primary", "Path": str(live.extra["art"] / "gone.jpg"), "Tag": "x"}])
    with live.client() as c:
        _problem(c.get(f"/Items/{uuid.uuid4().hex}/Images/Primary"), 404)
        _problem(c.get("/Items/not-a-guid/Images/Primary"), 404)
        _problem(c.get(f"/Items/{item_id}/Images/Nonsense"), 404)
        _problem(c.get(f"/Items/{item_id}/Images/Thumb"), 404)
        _problem(c.get(f"/Items/{item_id}/Images/Primary/3"), 404)
        _problem(c.get(f"/Items/{no_images}/Images/Primary"), 404)
        _problem(c.get(f"/Items/{missing_file}/Images/Primary"), 404)
        _problem(c.get(f"/Items/{broken_file}/Images/Primary", params={"maxWidth": 10}), 404)
        _problem(c.get(f"/Items/{item_id}/Images/Primary", params={"maxWidth": 0}), 400)
        _problem(c.get(f"/Items/{item_id}/Images/Primary", params={"fillHeight": 99999}), 400)
        _problem(c.get(f"/Items/{item_id}/Images/Primary", params={"quality": 101}), 400)
        _problem(c.get(f"/Items/{item_id}/Images/Primary", params={"blur": -1}), 400)
        _problem(c.get(f"/Items/{item_id}/Images/Primary", params={"backgroundColor": "#zzz"}), 400)
        _problem(c.get(f"/Items/{item_id}/Images/Primary", params={"format": "Gif"}), 400)
        _problem(c.get(f"/Items/{item_id}/Images/Primary", params={"percentPlayed": 120}), 400)
        _problem(c.get(f"/Items/{item_id}/Images/Primary", params={"maxWidth": "abc"}), 400)


def test_image_infos(live, poster):
    item_id, primary = poster
    with live.client() as c:
        assert c.get(f"/Items/{item_id}/Images").status_code == 401
    with live.admin() as c:
        infos = c.get(f"/Items/{item_id}/Images").json()
    by_type = {(i["ImageType"], i.get("ImageIndex")): i for i in infos}
    assert by_type[("Primary", None)]["ImageTag"] == primary["Tag"]
    assert by_type[("Primary", None)]["Width"] == 1000 and by_type[("Primary", None)]["Height"] == 1500
    assert by_type[("Primary", None)]["Size"] > 0
    assert {("Backdrop", 0), ("Backdrop", 1), ("Logo", None)} <= set(by_type)


def test_the_listening_socket_is_tcp_so_replies_are_not_delayed():
    # asyncio sets TCP_NODELAY on accepted connections only for sockets whose proto is TCP;
    # without it, an image reply (headers, then body) waited ~40 ms for a delayed ACK.
    import socket

    from server.runner import bind_socket

    sock = bind_socket("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()
