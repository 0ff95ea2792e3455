"""Images of people, genres, music genres, studios and artists (by-name folders under
<data>/metadata/ByName, people.image_path, MusicArtist rows), a scanned album's embedded cover,
and the cache cleanup task."""

from __future__ import annotations

import os
import time

from PIL import Image, ImageStat

from server.db.tables import ItemValue, Person
from server.library.catalog.ids import by_name_id
from tests.images.conftest import add_item, decode, entry_for, make_picture, picture_bytes
from tests.library_helpers import add_library_and_scan, refresh_and_wait
from tests.mediagen import make_audio, make_image


def _folder(live, kind: str, name: str):
    return live.data_dir / "metadata" / "ByName" / kind / name


def test_genre_studio_and_music_genre_folders(live):
    make_picture(_folder(live, "Genre", "Film Noir") / "folder.jpg", (300, 450))
    make_picture(_folder(live, "Genre", "Film Noir") / "backdrop.jpg", (320, 180), color=(0, 0, 250))
    make_picture(_folder(live, "Genre", "Film Noir") / "backdrop2.jpg", (320, 180), color=(0, 250, 0))
    make_picture(_folder(live, "Studio", "Acme") / "logo.png", (200, 100), mode="RGBA")
    make_picture(_folder(live, "MusicGenre", "Jazz") / "poster.jpg", (100, 100))
    with live.client() as c:
        r = c.get("/Genres/Film Noir/Images/Primary", params={"maxWidth": 100})
        assert r.status_code == 200 and decode(r.content).size == (100, 150)
        assert c.get("/genres/film noir/images/primary").status_code == 200  # case-insensitive route
        assert c.head("/Genres/Film Noir/Images/Primary").status_code == 200
        second = c.get("/Genres/Film Noir/Images/Backdrop/1", params={"format": "Png"})
        assert decode(second.content).convert("RGB").getpixel((300, 170))[1] > 200
        assert c.get("/Genres/Film Noir/Images/Backdrop", params={"imageIndex": 0}).status_code == 200
        assert c.get("/Genres/Film Noir/Images/Backdrop/2").status_code == 404
        assert c.get("/Genres/Film Noir/Images/Logo").status_code == 404
        assert c.get("/Genres/Nothing Here/Images/Primary").status_code == 404
        assert c.get("/Studios/Acme/Images/Logo", params={"format": "Png"}).status_code == 200
        assert c.get("/Studios/Acme/Images/Logo/0").status_code == 200
        assert c.get("/MusicGenres/Jazz/Images/Primary").status_code == 200
        assert c.get("/MusicGenres/Jazz/Images/Primary/0").status_code == 200
        assert c.get("/Genres/Jazz/Images/Primary").status_code == 404  # another kind
        # the same images through /Items/{by-name id}
        genre_id = by_name_id("Genre", "Film Noir")
        assert c.get(f"/Items/{genre_id}/Images/Primary", params={"maxWidth": 10}).status_code == 200
        assert c.get(f"/Items/{by_name_id('Studio', 'Acme')}/Images/Logo").status_code == 200
    with live.admin() as c:
        infos = c.get(f"/Items/{genre_id}/Images").json()
        assert sorted((i["ImageType"], i.get("ImageIndex")) for i in infos) == [
            ("Backdrop", 0), ("Backdrop", 1), ("Primary", None)]
        primary = next(i for i in infos if i["ImageType"] == "Primary")
        assert primary["Width"] == 300 and primary["Height"] == 450 and primary["BlurHash"]
    entries = live.ctx.images.folder_images("Genre", "film noir")  # for other domains' ImageTags
    assert {e["Tag"] for e in entries} == {i["ImageTag"] for i in infos}


def test_upload_for_a_genre_known_from_the_library(live):
    item_id = add_item(live, [], name="Genre Carrier")

    def write(s):
        s.add(ItemValue(item_id=item_id, kind="Genre", clean_value="space opera", value="Space Opera"))
        s.add(ItemValue(item_id=item_id, kind="Studio", clean_value="a/b studio", value="A/B Studio"))

    live.ctx.db.write_sync(write)
    genre_id = by_name_id("Genre", "Space Opera")
    studio_id = by_name_id("Studio", "A/B Studio")
    with live.client() as c:
        assert c.get(f"/Items/{genre_id}/Images/Primary").status_code == 404
    with live.admin() as c:
        r = c.post(f"/Items/{genre_id}/Images/Primary", content=picture_bytes((60, 90), (250, 0, 0)))
        assert r.status_code == 204, r.text
        assert (_folder(live, "Genre", "Space Opera") / "folder.jpg").exists()
        assert c.post(f"/Items/{studio_id}/Images/Thumb", content=picture_bytes((64, 36))).status_code == 204
        assert (_folder(live, "Studio", "A_B Studio") / ".name").read_text() == "A/B Studio"
        assert c.post(f"/Items/{studio_id}/Images/Backdrop", content=picture_bytes((64, 36))).status_code == 204
        assert c.post(f"/Items/{studio_id}/Images/Backdrop", content=picture_bytes((64, 36))).status_code == 204
        assert sorted(p.name for p in _folder(live, "Studio", "A_B Studio").iterdir()) == [
            ".name", "backdrop.jpg", "backdrop1.jpg", "thumb.jpg"]
    with live.client() as c:
        r = c.get("/Genres/Space Opera/Images/Primary", params={"format": "Png"})
        assert decode(r.content).convert("RGB").getpixel((5, 5))[0] > 200
        assert c.get(f"/Items/{studio_id}/Images/Thumb").status_code == 200  # found again by its .name
    with live.admin() as c:
        assert c.delete(f"/Items/{genre_id}/Images/Primary").status_code == 204
        assert not (_folder(live, "Genre", "Space Opera") / "folder.jpg").exists()
        assert c.delete(f"/Items/{studio_id}/Images/Backdrop/0").status_code == 204
        assert [p.name for p in _folder(live, "Studio", "A_B Studio").glob("backdrop*")] == ["backdrop1.jpg"]
        assert c.post(f"/Items/{'cd' * 16}/Images/Primary", content=picture_bytes((8, 8))).status_code == 404


def test_people_images(live):
    portrait = make_picture(live.extra["art"] / "people" / "ada.jpg", (200, 300))
    entry = entry_for(portrait)

    def write(s):
        s.add(Person(id=by_name_id("Person", "Ada Lovelace"), name="Ada Lovelace", sort_name="lovelace ada",
                     image_path=str(portrait), image_tag=entry["Tag"]))
        s.add(Person(id=by_name_id("Person", "No Picture"), name="No Picture", sort_name="no picture"))

    live.ctx.db.write_sync(write)
    person_id = by_name_id("Person", "Ada Lovelace")
    with live.client() as c:
        r = c.get("/Persons/Ada Lovelace/Images/Primary", params={"maxHeight": 150, "tag": entry["Tag"]})
        assert r.status_code == 200 and decode(r.content).size == (100, 150)
        assert "max-age=31536000" in r.headers["cache-control"]
        assert c.get(f"/Items/{person_id}/Images/Primary", params={"maxHeight": 150}).status_code == 200
        assert c.get("/Persons/Ada Lovelace/Images/Primary/0").status_code == 200
        assert c.get("/Persons/Ada Lovelace/Images/Backdrop").status_code == 404
        assert c.get("/Persons/No Picture/Images/Primary").status_code == 404
        assert c.get("/Persons/Nobody At All/Images/Primary").status_code == 404
    # a person's other image types live in the by-name folder
    make_picture(_folder(live, "Person", "Ada Lovelace") / "backdrop.jpg", (160, 90))
    with live.client() as c:
        assert c.get("/Persons/Ada Lovelace/Images/Backdrop").status_code == 200
    # uploading a person's Primary sets people.image_path under <data>/metadata/people
    none_id = by_name_id("Person", "No Picture")
    with live.admin() as c:
        assert c.post(f"/Items/{none_id}/Images/Primary", content=picture_bytes((50, 50))).status_code == 204
        row = live.ctx.db.read_sync(lambda s: s.get(Person, none_id))
        assert row.image_path.startswith(str(live.data_dir / "metadata" / "people"))
        assert c.get("/Persons/No Picture/Images/Primary").status_code == 200
        assert c.delete(f"/Items/{none_id}/Images/Primary").status_code == 204
        assert live.ctx.db.read_sync(lambda s: s.get(Person, none_id)).image_path is None
        assert portrait.exists()


def test_artist_images_from_the_item_and_its_folder(live):
    cover = make_picture(live.extra["art"] / "artist.jpg", (300, 300))
    artist_id = add_item(live, [entry_for(cover)], kind="MusicArtist", name="The Testers",
                         item_id=by_name_id("MusicArtist", "The Testers"))
    make_picture(_folder(live, "MusicArtist", "The Testers") / "logo.png", (100, 50), mode="RGBA")
    make_picture(_folder(live, "MusicArtist", "The Testers") / "folder.jpg", (10, 10))  # the row's wins
    with live.client() as c:
        r = c.get("/Artists/The Testers/Images/Primary/0", params={"maxWidth": 150})
        assert r.status_code == 200 and decode(r.content).size == (150, 150)
        assert c.get("/Artists/The Testers/Images/Logo/0").status_code == 200
        assert c.head("/Artists/The Testers/Images/Logo/0").status_code == 200
        assert c.get(f"/Items/{artist_id}/Images/Logo").status_code == 200
        assert c.get("/Artists/Unknown Band/Images/Primary/0").status_code == 404


def test_scanned_album_cover_end_to_end(live, tmp_path_factory):
    media = tmp_path_factory.mktemp("music-with-cover")
    cover = make_image(media / "covers" / "cover.jpg", 200, 200, color="red")
    album = media / "music" / "Cover Band" / "Shiny Album"
    for track in (1, 2):
        make_audio(album / f"{track:02d} - Song.flac", cover=cover, tags={
            "title": f"Song {track}", "artist": "Cover Band", "album_artist": "Cover Band",
            "album": "Shiny Album", "track": str(track)})
    add_library_and_scan(live, "Covered Music", "music", [media / "music"])
    from sqlalchemy import select

    from server.db.tables import Item

    rows = live.ctx.db.read_sync(lambda s: list(s.execute(
        select(Item).where(Item.type == "MusicAlbum", Item.name == "Shiny Album")).scalars()))
    assert len(rows) == 1
    album_row = rows[0]
    import json

    entries = json.loads(album_row.images_json)
    primary = next(e for e in entries if e["Type"] == "Primary")
    with live.client() as c:
        r = c.get(f"/Items/{album_row.id}/Images/Primary", params={"maxWidth": 64, "tag": primary["Tag"],
                                                                   "format": "Png"})
        assert r.status_code == 200, r.text
        img = decode(r.content).convert("RGB")
        assert img.size == (64, 64)
        with Image.open(cover) as original:  # the embedded cover, not some other picture
            expected = ImageStat.Stat(original.convert("RGB").resize((64, 64))).mean
        assert all(abs(a - b) < 12 for a, b in zip(ImageStat.Stat(img).mean, expected, strict=True))
        assert "max-age=31536000" in r.headers["cache-control"]
        track = next(e for e in live.ctx.db.read_sync(lambda s: list(s.execute(
            select(Item).where(Item.type == "Audio", Item.album_id == album_row.id)).scalars())))
        if json.loads(track.images_json):
            assert c.get(f"/Items/{track.id}/Images/Primary", params={"maxWidth": 32}).status_code == 200
    # an uploaded image and a reorder survive a rescan
    with live.admin() as c:
        for color in ((250, 0, 0), (0, 250, 0)):
            r = c.post(f"/Items/{album_row.id}/Images/Backdrop", content=picture_bytes((64, 36), color))
            assert r.status_code == 204
        assert c.post(f"/Items/{album_row.id}/Images/Backdrop/1/Index", params={"newIndex": 0}).status_code == 204
    with live.admin() as c:  # the DTO's tags are the ones the image routes accept
        dto = c.get(f"/Items/{album_row.id}").json()
        assert dto["ImageTags"]["Primary"] == primary["Tag"]
        assert len(dto["BackdropImageTags"]) == 2 and dto["ImageBlurHashes"]["Primary"][primary["Tag"]]
        backdrop0 = c.get(f"/Items/{album_row.id}/Images/Backdrop/0", params={"tag": dto["BackdropImageTags"][0]})
        assert "max-age=31536000" in backdrop0.headers["cache-control"]
    refresh_and_wait(live)
    after = json.loads(live.ctx.db.read_sync(lambda s: s.get(Item, album_row.id)).images_json)
    assert [e["Type"] for e in after].count("Backdrop") == 2
    assert next(e for e in after if e["Type"] == "Primary")["Tag"] == primary["Tag"]
    with live.client() as c:
        first = decode(c.get(f"/Items/{album_row.id}/Images/Backdrop/0", params={"format": "Png"}).content)
        assert first.convert("RGB").getpixel((5, 5))[1] > 200


def test_cache_cleanup_task(live, poster):
    item_id, _ = poster
    with live.client() as c:
        c.get(f"/Items/{item_id}/Images/Primary", params={"maxWidth": 55})
    cache_dir = live.data_dir / "cache" / "images"
    files = [p for p in cache_dir.rglob("*") if p.is_file()]
    assert files
    old = files[0]
    stale = time.time() - 40 * 86400
    os.utime(old, (stale, stale))
    with live.admin() as c:
        task = next(t for t in c.get("/ScheduledTasks").json() if t["Key"] == "DeleteCacheFiles")
        started = time.time()
        assert c.post(f"/ScheduledTasks/Running/{task['Id']}").status_code == 204
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            task = c.get(f"/ScheduledTasks/{task['Id']}").json()
            last = task.get("LastExecutionResult")
            if task["State"] == "Idle" and last and not old.exists():
                break
            time.sleep(0.05)
    assert not old.exists()
    assert all(p.exists() for p in files[1:])
    assert task["LastExecutionResult"]["Status"] == "Completed" and started
