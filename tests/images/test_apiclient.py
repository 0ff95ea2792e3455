"""jellyfin-apiclient-python (the Kodi add-on's and mpv-shim's client) uploading and fetching
images on the live server: base64 bodies, its URL builders' parameter spellings."""

from __future__ import annotations

import httpx
from jellyfin_apiclient_python import JellyfinClient
from jellyfin_apiclient_python.constants import ImageType

from tests.images.conftest import add_item, decode, entry_for, make_picture


def _client(url: str) -> JellyfinClient:
    client = JellyfinClient()
    client.config.app("Reelroom Image Tests", "1.0.0", "pytest-machine", "pytest-images-device")
    client.config.data["auth.ssl"] = False
    client.auth.connect_to_address(url)
    client.auth.login(url, "admin", "s3cret!")
    return client


def test_apiclient_uploads_and_urls(live, tmp_path):
    poster = make_picture(live.extra["art"] / "apiclient.jpg", (600, 900))
    item_id = add_item(live, [entry_for(poster)])
    client = _client(live.url)
    api = client.jellyfin

    url = api.artwork(item_id, "Primary", 300)  # MaxWidth=300&format=jpg (&api_key=...)
    r = httpx.get(url)
    assert r.status_code == 200, r.text
    assert decode(r.content).size == (300, 450) and decode(r.content).format == "JPEG"
    r = httpx.get(api.image_url(item_id, fill_width=200, fill_height=100, quality=80))
    assert decode(r.content).size == (200, 100)

    upload = make_picture(tmp_path / "new-backdrop.png", (320, 180), color=(0, 200, 0))
    api.set_item_image(item_id, str(upload), image_type=ImageType.BACKDROP)  # a str trips its enum check
    r = httpx.get(api.artwork(item_id, "Backdrop", 160, ext="png", index=0))
    assert r.status_code == 200 and decode(r.content).size == (160, 90)
    infos = api.items(f"/{item_id}/Images")
    assert {i["ImageType"] for i in infos} == {"Primary", "Backdrop"}

    face = make_picture(tmp_path / "face.jpg", (96, 96), color=(0, 0, 220))
    api.set_user_image(live.admin_id, str(face))
    tag = api.get_user(live.admin_id)["PrimaryImageTag"]
    r = httpx.get(f"{live.url}/UserImage", params={"userId": live.admin_id, "tag": tag, "format": "Png"})
    assert r.status_code == 200 and decode(r.content).convert("RGB").getpixel((80, 80))[2] > 180

    # it spells the parameter user_id: an administrator setting someone else's image
    with live.admin() as c:
        other = c.post("/Users/New", json={"Name": "apiclient-other"}).json()["Id"]
    api.set_user_image(other, str(face))
    assert api.get_user(other).get("PrimaryImageTag")
    assert api.get_user(live.admin_id)["PrimaryImageTag"] == tag
    with live.admin() as c:
        assert c.delete("/UserImage", params={"userId": live.admin_id}).status_code == 204
