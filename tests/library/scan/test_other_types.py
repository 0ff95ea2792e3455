"""Photos, books, home videos, music videos, and DVD / Blu-ray folders in a movie library."""

from __future__ import annotations

from pathlib import Path

from server.library.catalog import ids
from tests.library.conftest import images, items, one
from tests.library_helpers import add_library_and_scan
from tests.mediagen import make_image, make_video


def test_other_library_types(server, tmp_path: Path) -> None:
    tiny = {"seconds": 1.0, "width": 160, "height": 120, "fps": 10}
    photos = tmp_path / "photos"
    make_image(photos / "Trip" / "beach.jpg", 80, 60)
    make_image(photos / "Trip" / "hill.png", 30, 40)
    books = tmp_path / "books"
    (books / "Author").mkdir(parents=True)
    (books / "Author" / "A Book.epub").write_bytes(b"PK\x03\x04 not really a book")
    (books / "Loose.pdf").write_bytes(b"%PDF-1.4\n")
    home = tmp_path / "home"
    make_video(home / "Birthday 2020.mp4", **tiny)
    make_image(home / "Party" / "cake.jpg", 50, 50)
    mv = tmp_path / "musicvideos"
    make_video(mv / "Band - Song.mkv", **tiny)
    movies = tmp_path / "movies"
    dvd = movies / "Old Movie (1990)" / "VIDEO_TS"
    dvd.mkdir(parents=True)
    (dvd / "VIDEO_TS.IFO").write_bytes(b"DVDVIDEO-VMG")
    (dvd / "VTS_01_1.VOB").write_bytes(b"\x00" * 2048)
    bd = movies / "New Movie (2012)" / "BDMV"
    (bd / "STREAM").mkdir(parents=True)
    (bd / "index.bdmv").write_bytes(b"INDX0200")
    (bd / "STREAM" / "00001.m2ts").write_bytes(b"\x00" * 2048)

    libs = {name: add_library_and_scan(server, name, kind, [path]) for name, kind, path in (
        ("Photos", "photos", photos), ("Books", "books", books), ("Home", "homevideos", home),
        ("Clips", "musicvideos", mv), ("Movies", "movies", movies))}

    album = one(server, type="PhotoAlbum")
    assert album.name == "Trip" and album.parent_id == libs["Photos"]
    beach = one(server, type="Photo", name="beach")
    assert beach.parent_id == album.id and (beach.width, beach.height) == (80, 60) and beach.media_type == "Photo"
    assert images(beach)[0]["Path"].endswith("beach.jpg") and images(beach)[0]["BlurHash"]
    book = one(server, type="Book", name="A Book")
    assert book.parent_id == one(server, type="Folder", name="Author").id and book.container == "epub"
    assert one(server, type="Book", name="Loose").parent_id == libs["Books"]
    video = one(server, type="Video", name="Birthday 2020")
    assert video.parent_id == libs["Home"] and video.run_time_ticks
    assert one(server, name="cake").type == "Photo"
    clip = one(server, type="MusicVideo")
    assert clip.parent_id == libs["Clips"] and clip.width == 160
    old = one(server, type="Movie", name="Old Movie")
    assert (old.video_type, old.production_year, old.parent_id) == ("Dvd", 1990, libs["Movies"])
    assert old.id == ids.item_id_for_path(str(movies / "Old Movie (1990)"))
    new = one(server, type="Movie", name="New Movie")
    assert new.video_type == "BluRay"
    assert len(items(server, library_id=libs["Movies"])) == 3  # the two discs and the CollectionFolder
