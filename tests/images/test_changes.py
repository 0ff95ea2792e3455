"""Uploading (base64 as Jellyfin clients send, or raw), deleting and reordering item images;
user images and who may change them."""

from __future__ import annotations

import base64
import json

from server.db.tables import Item
from tests.images.conftest import add_item, decode, entry_for, make_picture, picture_bytes


def _images(live, item_id: str) -> list[dict]:
    return json.loads(live.ctx.db.read_sync(lambda s: s.get(Item, item_id)).images_json)


def _pixel(c, url: str, **params) -> tuple[int, int, int]:
    r = c.get(url, params={"format": "Png", **params})
    assert r.status_code == 200, r.text
    return decode(r.content).convert("RGB").getpixel((5, 5))


def _upload(c, url: str, content: bytes, encode: bool = True):
    body = base64.b64encode(content) if encode else content
    return c.post(url, content=body, headers={"Content-Type": "image/jpeg"})


def test_upload_replace_delete_primary(live):
    old = make_picture(live.extra["art"] / "upload-old.jpg", (200, 300))
    item_id = add_item(live, [entry_for(old)])
    url = f"/Items/{item_id}/Images/Primary"
    with live.admin() as c:
        assert _upload(c, url, picture_bytes((300, 450), (0, 0, 255))).status_code == 204
        images = _images(live, item_id)
        assert [i["Type"] for i in images] == ["Primary"]
        entry = images[0]
        assert entry["Provider"] == "Upload" and entry["Width"] == 300 and entry["BlurHash"]
        folder = live.data_dir / "metadata" / "items" / item_id[:2] / item_id
        assert str(folder) in entry["Path"]
        assert old.exists()  # artwork beside media is never deleted
        assert _pixel(c, url, tag=entry["Tag"])[2] > 200
        infos = c.get(f"/Items/{item_id}/Images").json()
        assert infos[0]["ImageTag"] == entry["Tag"] and infos[0]["BlurHash"] == entry["BlurHash"]
        # raw bytes work too, and replace the upload (whose file goes)
        assert _upload(c, url, picture_bytes((300, 450), (255, 0, 0), "PNG"), encode=False).status_code == 204
        new = _images(live, item_id)[0]
        assert new["Tag"] != entry["Tag"] and new["Path"].endswith(".png")
        assert not os_exists(entry["Path"])
        assert _pixel(c, url)[0] > 200
        assert c.delete(url).status_code == 204
        assert _images(live, item_id) == [] and not os_exists(new["Path"])
        assert c.get(url).status_code == 404
        assert c.delete(url).status_code == 404


def os_exists(path: str) -> bool:
    import os

    return os.path.exists(path)


def test_backdrops_append_reorder_and_delete_by_index(live):
    item_id = add_item(live, [])
    with live.admin() as c:
        colors = [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
        for color in colors:
            assert _upload(c, f"/Items/{item_id}/Images/Backdrop", picture_bytes((160, 90), color)).status_code == 204
        assert [i["Index"] for i in _images(live, item_id)] == [0, 1, 2]
        assert _pixel(c, f"/Items/{item_id}/Images/Backdrop/2")[2] > 200
        # move the blue one (2) to the front
        r = c.post(f"/Items/{item_id}/Images/Backdrop/2/Index", params={"newIndex": 0})
        assert r.status_code == 204, r.text
        order = [_pixel(c, f"/Items/{item_id}/Images/Backdrop/{i}") for i in range(3)]
        assert [max(range(3), key=lambda ch, p=p: p[ch]) for p in order] == [2, 0, 1]
        assert c.post(f"/Items/{item_id}/Images/Backdrop/0/Index", params={"newIndex": 7}).status_code == 404
        assert c.post(f"/Items/{item_id}/Images/Backdrop/5/Index", params={"newIndex": 0}).status_code == 404
        assert c.post(f"/Items/{item_id}/Images/Backdrop/0/Index").status_code == 400
        # replace index 1 (red) with white, by index
        r = _upload(c, f"/Items/{item_id}/Images/Backdrop/1", picture_bytes((160, 90), (255, 255, 255)))
        assert r.status_code == 204
        assert _pixel(c, f"/Items/{item_id}/Images/Backdrop/1") == (255, 255, 255)
        assert len(_images(live, item_id)) == 3
        # delete index 0 (blue): white and green remain, renumbered
        assert c.delete(f"/Items/{item_id}/Images/Backdrop/0").status_code == 204
        assert [i["Index"] for i in _images(live, item_id)] == [0, 1]
        assert _pixel(c, f"/Items/{item_id}/Images/Backdrop/0") == (255, 255, 255)
        assert c.delete(f"/Items/{item_id}/Images/Backdrop", params={"imageIndex": 1}).status_code == 204
        assert c.delete(f"/Items/{item_id}/Images/Backdrop/4").status_code == 404
        assert len(_images(live, item_id)) == 1


def test_upload_errors_and_auth(live):
    item_id = add_item(live, [])
    url = f"/Items/{item_id}/Images/Primary"
    with live.client() as anonymous:
        assert _upload(anonymous, url, picture_bytes((10, 10))).status_code == 401
    with live.admin() as c:
        viewer = c.post("/Users/New", json={"Name": "imgviewer", "Password": "pw"}).json()
    with live.client(device="viewer-device") as c:  # its own device: a sign-in replaces the device's token
        token = c.post("/Users/AuthenticateByName", json={"Username": "imgviewer", "Pw": "pw"}).json()["AccessToken"]
    with live.client(token, "viewer-device") as c:
        assert _upload(c, url, picture_bytes((10, 10))).status_code == 403
        assert c.delete(url).status_code == 403
    with live.admin() as c:
        assert c.post(url, content=b"").status_code == 400
        assert c.post(url, content=b"definitely not an image").status_code == 400
        assert c.post(url, content=base64.b64encode(b"still not an image")).status_code == 400
        r = _upload(c, "/Items/" + "ab" * 16 + "/Images/Primary", picture_bytes((10, 10)))
        assert r.status_code == 404
        assert _upload(c, f"/Items/{item_id}/Images/Bogus", picture_bytes((10, 10))).status_code == 404
    assert viewer["Id"]


def test_user_images_and_permissions(live):
    admin_id = live.admin_id
    with live.admin() as c:
        other = c.post("/Users/New", json={"Name": "imguser", "Password": "pw"}).json()["Id"]
    with live.client(device="imguser-device") as c:
        token = c.post("/Users/AuthenticateByName", json={"Username": "imguser", "Pw": "pw"}).json()["AccessToken"]
    with live.client() as anonymous:
        assert anonymous.get("/UserImage", params={"userId": other}).status_code == 404
        assert anonymous.post("/UserImage", params={"userId": other}, content=b"x").status_code == 401
    with live.client(token, "imguser-device") as c:
        # own image: base64 body, no userId means the caller
        r = c.post("/UserImage", content=base64.b64encode(picture_bytes((128, 128), (250, 0, 250))),
                   headers={"Content-Type": "image/jpeg"})
        assert r.status_code == 204, r.text
        # someone else's: only an administrator
        assert c.post("/UserImage", params={"userId": admin_id},
                      content=base64.b64encode(picture_bytes((8, 8)))).status_code == 403
        assert c.delete("/UserImage", params={"userId": admin_id}).status_code == 403
        me = c.get(f"/Users/{other}").json()
        assert me["PrimaryImageTag"]
    files = list((live.data_dir / "users" / other).iterdir())
    assert len(files) == 1
    with live.client() as anonymous:
        r = anonymous.get("/UserImage", params={"userId": other, "maxWidth": 64, "tag": me["PrimaryImageTag"],
                                                "format": "Png"})
        assert r.status_code == 200 and decode(r.content).size == (64, 64)
        assert decode(r.content).convert("RGB").getpixel((30, 30))[0] > 200
        assert "max-age=31536000" in r.headers["cache-control"]
        h = anonymous.head("/UserImage", params={"userId": other, "maxWidth": 64, "format": "Png"})
        assert h.status_code == 200 and h.content == b"" and h.headers["etag"] == r.headers["etag"]
        assert anonymous.get("/UserImage", params={"userId": "ab" * 16}).status_code == 404
    with live.admin() as c:  # an administrator may replace and delete anyone's
        assert c.post("/UserImage", params={"userId": other},
                      content=base64.b64encode(picture_bytes((32, 32), (0, 250, 0)))).status_code == 204
        assert list((live.data_dir / "users" / other).iterdir()) != files
        assert len(list((live.data_dir / "users" / other).iterdir())) == 1
        assert c.delete("/UserImage", params={"userId": other}).status_code == 204
        assert "PrimaryImageTag" not in c.get(f"/Users/{other}").json()
        assert c.get("/UserImage", params={"userId": other}).status_code == 404
    assert list((live.data_dir / "users" / other).iterdir()) == []


def _corner(c, url: str) -> tuple[int, int, int]:
    """The bottom-right pixel of a 100-wide rendering (make_picture's colour, not its black quadrant)."""
    r = c.get(url, params={"format": "Png", "fillWidth": 100})
    assert r.status_code == 200, r.text
    img = decode(r.content).convert("RGB")
    return img.getpixel((img.width - 5, img.height - 5))


def test_kept_image_list_is_never_served_stale(live):
    """The image list of an item is kept in memory between requests (ImageService.item_target);
    a write by anyone else (a rescan, artwork, another process's tool going through the writer)
    must be seen on the next request, as must a file replaced in place."""
    red = make_picture(live.extra["art"] / "kept-red.jpg", (200, 300), color=(250, 0, 0))
    blue = make_picture(live.extra["art"] / "kept-blue.jpg", (200, 300), color=(0, 0, 250))
    item_id = add_item(live, [entry_for(red)])
    url = f"/Items/{item_id}/Images/Primary"
    with live.admin() as c:
        assert _corner(c, url)[0] > 200 and _corner(c, url)[0] > 200  # kept now
        live.ctx.db.write_sync(lambda s: setattr(s.get(Item, item_id), "images_json", json.dumps([entry_for(blue)])))
        assert _corner(c, url)[2] > 200  # the new poster, not the kept list's
        # a Backdrop added by a writer: the type exists at once
        assert c.get(f"/Items/{item_id}/Images/Backdrop").status_code == 404
        live.ctx.db.write_sync(lambda s: setattr(s.get(Item, item_id), "images_json", json.dumps(
            [entry_for(blue), entry_for(red, "Backdrop", 0)])))
        assert _corner(c, f"/Items/{item_id}/Images/Backdrop")[0] > 200
        # the file replaced at the same path (same list): the rendering is made again
        make_picture(blue, (200, 300), color=(0, 250, 0))
        import os
        os.utime(blue, ns=(blue.stat().st_atime_ns, blue.stat().st_mtime_ns + 5_000_000_000))
        assert _corner(c, url)[1] > 200
        # the item gone: 404, not the kept list
        live.ctx.db.write_sync(lambda s: s.delete(s.get(Item, item_id)))
        assert c.get(url).status_code == 404


def _artwork_settled(live, timeout: float = 30.0) -> None:
    """Wait until no artwork run is going or due (the upload tests above ask for one)."""
    import time

    deadline = time.monotonic() + timeout
    while live.ctx.artwork.pending:
        assert time.monotonic() < deadline, "the artwork run did not finish"
        time.sleep(0.05)


def test_kept_image_list_outlives_play_state_writes(live):
    """Play-state writes (user data: a few a second under load) leave an item's kept image list
    kept (no read of the row); a write of the item's images, even in the same transaction as
    user data, shows on the next request."""
    red = make_picture(live.extra["art"] / "play-red.jpg", (200, 300), color=(250, 0, 0))
    blue = make_picture(live.extra["art"] / "play-blue.jpg", (200, 300), color=(0, 0, 250))
    item_id = add_item(live, [entry_for(red)])
    url = f"/Items/{item_id}/Images/Primary"
    images = live.ctx.images
    _artwork_settled(live)  # earlier tests' image changes start an artwork run, whose writes are content
    with live.admin() as c:
        user_id = c.get("/Users/Me").json()["Id"]
        assert _corner(c, url)[0] > 200
        kept = images._targets[item_id]
        generation, content = live.ctx.db.generation, live.ctx.db.content_generation
        assert c.post(f"/UserFavoriteItems/{item_id}", params={"userId": user_id}).status_code == 200
        assert c.post(f"/UserPlayedItems/{item_id}", params={"userId": user_id}).status_code == 200
        assert live.ctx.db.generation > generation  # (written)
        assert live.ctx.db.content_generation == content  # user data only
        assert _corner(c, url)[0] > 200
        assert images._targets[item_id] is kept  # not read again

        def images_and_user_data(s) -> None:  # one transaction: user data and the item's images
            from server.db.tables import UserData
            ud = s.get(UserData, (user_id, item_id))
            ud.is_favorite = False
            s.get(Item, item_id).images_json = json.dumps([entry_for(blue)])

        live.ctx.db.write_sync(images_and_user_data)
        assert _corner(c, url)[2] > 200  # the new poster at once
        assert images._targets[item_id] is not kept
