"""The images an item borrows from its parents (``dto._apply_parent_images``): an item with one
parent (a track whose album is its parent too) applies that parent's kept plan (``dto._lent``,
kept on the parent's ``_ParentArt``); any other chain is walked (``_apply_parent_chain``, the
walk every item took before). Both give the same DTO for every mix of own and parent images,
image limits and roles (album, series, plain parent); a plan is made once per parent images and
options, and a parent's new images (a content write) show in the next build. Real SQLite file."""

from __future__ import annotations

import json
from typing import Any

import pytest

from server.db import migrate
from server.db.database import Database, sqlite_url
from server.db.tables import Item
from server.library.catalog import dto
from server.library.catalog.query import get_rows
from server.wire.casing import encode_wire

BLUR = "WBF~Q+00?b_2M{%M00?b~q%MRjof"


def _img(kind: str, tag: str, blur: bool = True) -> dict[str, Any]:
    return {"Type": kind, "Tag": tag, "Path": f"/m/{tag}.jpg", "Width": 600, "Height": 400,
            **({"BlurHash": BLUR + tag[-1]} if blur else {})}


#: parents' images: none, a cover, a cover without a hash, and every kind (three backdrops)
PARENT_IMAGES = [
    [],
    [_img("Primary", "p1")],
    [_img("Primary", "p2", blur=False)],
    [_img("Primary", "p3"), _img("Backdrop", "b1"), _img("Backdrop", "b2", blur=False), _img("Backdrop", "b3"),
     _img("Logo", "l1"), _img("Thumb", "t1"), _img("Art", "a1", blur=False), _img("Primary", "p4")],
    [_img("Thumb", "t2"), _img("Backdrop", "b4")],
]
#: the items' own images: none, their own cover, a backdrop and a thumb of their own
OWN_IMAGES = [[], [_img("Primary", "o1")], [_img("Backdrop", "o2"), _img("Thumb", "o3", blur=False)]]


@pytest.fixture
def db(tmp_path):
    database = Database(sqlite_url(tmp_path / "parents.db"))
    migrate.upgrade(database.engine, database.url)
    yield database
    database.close()


def _id(n: int) -> str:
    return f"{n:032x}"


def _library(db: Database) -> list[str]:
    """Albums with each parent image set, a track of each own image set on each (album its parent
    too); a track whose parent is a folder of its own; a series, season and episode chain."""
    made: list[str] = []

    def write(s):  # type: ignore[no-untyped-def]
        n = 1
        for a, images in enumerate(PARENT_IMAGES):
            album = _id(1000 + a)
            s.add(Item(id=album, type="MusicAlbum", media_type="Unknown", is_folder=True, name=f"Album {a}",
                       sort_name=f"album {a}", library_id="lib", images_json=json.dumps(images)))
            for o, own in enumerate(OWN_IMAGES):
                track = _id(n)
                n += 1
                s.add(Item(id=track, type="Audio", media_type="Audio", name=f"Track {a}.{o}", sort_name=f"t {a}.{o}",
                           library_id="lib", album_id=album, parent_id=album, album=f"Album {a}",
                           images_json=json.dumps(own)))
                made.append(track)
        # a track filed under a folder of its own, not its album: two parents
        s.add(Item(id=_id(2000), type="Folder", media_type="Unknown", is_folder=True, name="Disc 1", sort_name="d",
                   library_id="lib", images_json=json.dumps([_img("Primary", "f1")])))
        s.add(Item(id=_id(2001), type="MusicAlbum", media_type="Unknown", is_folder=True, name="Split", sort_name="s",
                   library_id="lib", images_json=json.dumps(PARENT_IMAGES[3])))
        s.add(Item(id=_id(n), type="Audio", media_type="Audio", name="Filed", sort_name="filed", library_id="lib",
                   album_id=_id(2001), parent_id=_id(2000), images_json="[]"))
        made.append(_id(n))
        # a series, its season and an episode: the chain is walked
        s.add(Item(id=_id(3000), type="Series", media_type="Unknown", is_folder=True, name="Show", sort_name="show",
                   library_id="lib", images_json=json.dumps(PARENT_IMAGES[3])))
        s.add(Item(id=_id(3001), type="Season", media_type="Unknown", is_folder=True, name="Season 1",
                   sort_name="season 1", library_id="lib", series_id=_id(3000), parent_id=_id(3000),
                   images_json=json.dumps([_img("Primary", "s1")])))
        for o, own in enumerate(OWN_IMAGES):
            s.add(Item(id=_id(3100 + o), type="Episode", media_type="Video", name=f"Ep {o}", sort_name=f"ep {o}",
                       library_id="lib", series_id=_id(3000), season_id=_id(3001), parent_id=_id(3001),
                       images_json=json.dumps(own)))
            made.append(_id(3100 + o))
        # a season alone under its series (one parent, which is its series)
        made.append(_id(3001))

    db.write_sync(write)
    return made


def _walked(d: Any, row: Any, images: list[dict], parents: dict[str, Any], opts: dto.DtoOptions) -> None:
    """The walk of every parent, as every item took it before the plans."""
    arts = []
    for x in (getattr(row, "season_id", None), getattr(row, "series_id", None), getattr(row, "album_id", None),
              row.parent_id):
        if x:
            p = parents.get(x)
            if p is not None and p.type not in ("CollectionFolder", "Folder"):
                arts.append((p.id, dto._parent_art(p.images_json)))
    if arts:
        dto._apply_parent_chain(d, row, images, parents, opts, arts)


def _encoded(db: Database, ids: list[str], opts: dto.DtoOptions) -> list[bytes]:
    def read(s):  # type: ignore[no-untyped-def]
        rows = get_rows(s, ids)
        return [encode_wire(d, camel) for d in dto.build_dtos(s, [rows[i] for i in ids], opts, "server")
                for camel in (False, True)]

    return db.read_sync(read)


@pytest.mark.parametrize("limit", [None, 0, 1, 2])
def test_a_parents_plan_gives_the_dto_the_walk_gives(db: Database, monkeypatch, limit) -> None:
    ids = _library(db)
    for fields in (frozenset(), frozenset({"PrimaryImageAspectRatio"})):
        opts = dto.DtoOptions(fields=fields, image_type_limit=limit)
        planned = _encoded(db, ids, opts)
        with monkeypatch.context() as m:
            m.setattr(dto, "_apply_parent_images", _walked)
            walked = _encoded(db, ids, opts)
        assert planned == walked
        # (the cases are real: parents lend tags and hashes, own images keep theirs)
        text = b"".join(planned)
        assert b'"AlbumPrimaryImageTag":"p1"' in text and b'"ParentBackdropItemId"' in text
        assert b'"SeriesPrimaryImageTag":"p3"' in text and b'"ParentThumbImageTag":"t2"' in text


def test_a_plan_is_made_once_and_a_parents_new_images_show_at_once(db: Database, monkeypatch) -> None:
    ids = _library(db)[:3]  # album 0's three tracks (no images yet)
    opts = dto.DtoOptions(fields=frozenset({"PrimaryImageAspectRatio"}))
    dto._parent_art.cache_clear()  # (the arts, and their plans, are kept by the images' text, across tests)
    made: list[tuple[Any, ...]] = []
    real = dto._lent
    monkeypatch.setattr(dto, "_lent", lambda *a: made.append(a[1:]) or real(*a))
    first = _encoded(db, ids, opts)
    assert b"AlbumPrimaryImageTag" not in b"".join(first)
    assert len(made) == 3  # one a kind of own images (none, a cover, a backdrop and a thumb)
    assert _encoded(db, ids, opts) == first and len(made) == 3  # kept: none made again
    album = _id(1000)

    def edit(s):  # type: ignore[no-untyped-def]  # the album gets a cover (a content write)
        s.get(Item, album).images_json = json.dumps([_img("Primary", "new1")])

    db.write_sync(edit)
    after = b"".join(_encoded(db, ids, opts)).lower()  # (both casings)
    assert after.count(b'"albumprimaryimagetag":"new1"') == 6  # every track, both casings
    assert after.count(b'"parentprimaryimagetag":"new1"') == 4  # (not the one with a cover of its own)
    assert len(made) == 6
