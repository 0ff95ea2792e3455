"""The kept list counts (server/library/catalog/facets.py): the triggers keep item_value_counts
and item_field_counts equal to a recount through every kind of write (items before or after
their values, multi-row statements, cascaded deletes, moves between libraries and types,
versions becoming owned, spelling changes), on SQLite and on PostgreSQL; the by-name lists and
Items/Filters read from them give exactly what the grouped query over the items gives, for
restricted users too; a dropped trigger is put back (and the counts refilled) at start."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, text

from server.db import migrate
from server.db.dialect import normalize_url
from server.library.catalog import facets
from server.library.catalog.by_name import NameQuery, list_names
from server.library.catalog.query import ItemQuery, filter_values
from tests.conftest import ON_POSTGRES, create_test_database, drop_test_database

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(
    not ON_POSTGRES, reason="REELROOM_TEST_DATABASE_URL does not name a PostgreSQL server"))]

NAMES = ["Rock", "rock", "Pop", "ABBA", "Abba", "Jazz"]
KINDS = ["Genre", "Artist", "AlbumArtist", "Studio", "Tag"]
ITEM_COLUMNS = ("id, type, media_type, is_folder, name, sort_name, date_created, genres_json, studios_json, "
                "tags_json, artists_json, album_artists_json, provider_ids_json, media_streams_json, chapters_json, "
                "images_json, is_locked, locked_fields_json, is_virtual, library_id, owner_id, production_year, "
                "official_rating")
INSERT_ITEM = text(f"INSERT INTO items ({ITEM_COLUMNS}) VALUES (:id, :type, 'Unknown', false, :name, :name, :created, "
                   "'[]', '[]', '[]', '[]', '[]', '{}', '[]', '[]', '[]', false, '[]', false, :lib, :owner, :year, "
                   ":rating)")


@pytest.fixture(params=BACKENDS)
def engine(request, tmp_path):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'kept.db'}"
    else:
        url = create_test_database()
    eng = create_engine(normalize_url(url))
    if request.param == "sqlite":
        from sqlalchemy import event

        event.listen(eng, "connect", lambda c, _r: c.execute("PRAGMA foreign_keys=ON"))
    migrate.upgrade(eng, url)
    yield eng
    eng.dispose()
    if request.param != "sqlite":
        drop_test_database(url)


def _kept(conn) -> tuple[list, list]:
    return (sorted(tuple(r) for r in conn.exec_driver_sql(
                "SELECT * FROM item_value_counts WHERE item_count <> 0").all()),
            sorted(tuple(r) for r in conn.exec_driver_sql(
                "SELECT * FROM item_field_counts WHERE item_count <> 0").all()))


def _recounted(conn) -> tuple[list, list]:
    conn.exec_driver_sql("SAVEPOINT recount")
    facets.refill(conn)
    found = _kept(conn)
    conn.exec_driver_sql("ROLLBACK TO SAVEPOINT recount")
    return found


def _item(conn, item_id: str, rnd: random.Random, **kw) -> None:
    params = {"id": item_id, "type": rnd.choice(["Audio", "Movie", "MusicAlbum"]), "name": item_id,
              "created": datetime.now(UTC), "lib": rnd.choice(["L1", "L2", None]),
              "owner": rnd.choice([None, None, "x0"]), "year": rnd.choice([None, 1999, 2001]),
              "rating": rnd.choice([None, "", "PG", "R"])}
    params.update(kw)
    conn.execute(INSERT_ITEM, params)


def _random_write(conn, rnd: random.Random, ids: list[str]) -> None:
    item_id = rnd.choice(ids)
    exists = conn.execute(text("SELECT 1 FROM items WHERE id = :i"), {"i": item_id}).first() is not None
    op = rnd.randrange(9)
    value = rnd.choice(NAMES)
    if op in (0, 1) and not exists:
        _item(conn, item_id, rnd)
    elif op in (2, 3) and exists:
        conn.execute(text("INSERT INTO item_values (item_id, kind, clean_value, value) VALUES (:i, :k, :c, :v)"),
                     {"i": item_id, "k": rnd.choice(KINDS), "c": value.lower(), "v": value})
    elif op == 4 and exists:  # one statement, two rows: the artist and album artist of one name
        conn.execute(text("INSERT INTO item_values (item_id, kind, clean_value, value) VALUES "
                          "(:i, 'Artist', :c, :v), (:i, 'AlbumArtist', :c, :v2)"),
                     {"i": item_id, "c": value.lower(), "v": value, "v2": rnd.choice([value, value.upper()])})
    elif op == 5:
        row = conn.execute(text("SELECT kind, clean_value FROM item_values WHERE item_id = :i"),
                           {"i": item_id}).first()
        if row is not None:
            conn.execute(text("DELETE FROM item_values WHERE item_id = :i AND kind = :k AND clean_value = :c"),
                         {"i": item_id, "k": row[0], "c": row[1]})
    elif op == 6 and exists:
        if rnd.random() < 0.5:  # else the foreign key's ON DELETE CASCADE takes the values
            conn.execute(text("DELETE FROM item_values WHERE item_id = :i"), {"i": item_id})
        conn.execute(text("DELETE FROM items WHERE id = :i"), {"i": item_id})
    elif op == 7 and exists:
        column, new = rnd.choice([("library_id", rnd.choice(["L1", "L2", None])),
                                  ("type", rnd.choice(["Audio", "Movie"])), ("owner_id", rnd.choice([None, "x1"])),
                                  ("production_year", rnd.choice([None, 1999, 2005])),
                                  ("official_rating", rnd.choice([None, "PG", "R", ""])), ("name", "renamed")])
        conn.execute(text(f"UPDATE items SET {column} = :v WHERE id = :i"), {"v": new, "i": item_id})
    elif op == 8:
        row = conn.execute(text("SELECT kind, clean_value FROM item_values WHERE item_id = :i"),
                           {"i": item_id}).first()
        if row is not None:
            conn.execute(text("UPDATE item_values SET kind = :k2, clean_value = :c2, value = :v2 "
                              "WHERE item_id = :i AND kind = :k AND clean_value = :c"),
                         {"i": item_id, "k": row[0], "c": row[1], "k2": rnd.choice(KINDS), "c2": value.lower(),
                          "v2": value})


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_triggers_keep_the_counts_equal_to_a_recount(engine, seed):
    rnd = random.Random(seed)
    ids = [f"i{n}" for n in range(10)]
    with engine.begin() as conn:
        for owner in ("x0", "x1"):
            _item(conn, owner, rnd, owner=None)
    for step in range(250):
        with engine.begin() as conn:
            try:
                with conn.begin_nested():
                    _random_write(conn, rnd, ids)
            except Exception as exc:  # a duplicate value or a value of a missing item: refused as it should be
                if not any(word in str(exc).lower() for word in ("unique", "foreign", "duplicate")):
                    raise
        with engine.begin() as conn:
            kept, recounted = _kept(conn), _recounted(conn)
        assert kept == recounted, f"step {step}"
    assert kept[0] and kept[1], "the random writes left something to count"


def test_a_missing_trigger_is_recreated_and_the_counts_refilled(engine):
    with engine.begin() as conn:
        _item(conn, "a", random.Random(1), type="Audio", lib="L1", owner=None, year=1999, rating="PG")
        facets.drop_triggers(conn)
        conn.execute(text("INSERT INTO item_values (item_id, kind, clean_value, value) VALUES "
                          "('a', 'Genre', 'rock', 'Rock')"))
        assert not conn.exec_driver_sql("SELECT * FROM item_value_counts WHERE kind = 'Genre'").all()
    facets.ensure(engine)
    with engine.begin() as conn:
        assert conn.exec_driver_sql("SELECT kind, clean_value, value, library_id, item_type, item_count "
                                    "FROM item_value_counts WHERE kind = 'Genre'").all() == [
            ("Genre", "rock", "Rock", "L1", "Audio", 1)]
        conn.execute(text("DELETE FROM items WHERE id = 'a'"))  # the triggers work again
    facets.ensure(engine)  # and rows counted down to 0 are purged
    with engine.begin() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM item_value_counts").scalar() == 0
        assert conn.exec_driver_sql("SELECT count(*) FROM item_field_counts").scalar() == 0


# ------------------------------------------------------------------ lists: kept == grouped


def _library(conn) -> None:
    rnd = random.Random(7)
    now = datetime.now(UTC)
    for lib in ("L1", "L2"):
        conn.execute(INSERT_ITEM, {"id": lib, "type": "CollectionFolder", "name": lib, "created": now, "lib": lib,
                                   "owner": None, "year": None, "rating": None})
    values = []
    for n in range(120):
        kind = rnd.choice(["Audio", "Audio", "MusicAlbum", "Movie", "Episode"])
        item_id = f"it{n}"
        conn.execute(INSERT_ITEM, {"id": item_id, "type": kind, "name": item_id, "created": now,
                                   "lib": rnd.choice(["L1", "L2"]), "owner": "it0" if n % 17 == 5 else None,
                                   "year": rnd.choice([None, 1980, 1999, 2010]),
                                   "rating": rnd.choice([None, "", "PG", "R", "TV-MA"])})
        for k in rnd.sample(KINDS, 3):
            name = rnd.choice(NAMES + ["Zed", "Émile", "the band"])
            values.append({"i": item_id, "k": k, "c": name.lower(), "v": name})
        if n % 3 == 0:  # one name as artist and album artist (counted once by the artist list)
            values.append({"i": item_id, "k": "AlbumArtist", "c": "both", "v": "Both"})
            values.append({"i": item_id, "k": "Artist", "c": "both", "v": "BOTH"})
    seen = set()
    for v in values:
        if (v["i"], v["k"], v["c"]) not in seen:
            seen.add((v["i"], v["k"], v["c"]))
            conn.execute(text("INSERT INTO item_values (item_id, kind, clean_value, value) VALUES (:i, :k, :c, :v)"), v)


def _both_ways(monkeypatch, s, fn):
    kept = fn()
    with monkeypatch.context() as m:
        m.setattr(facets, "simple_scope", lambda *a, **k: None)
        grouped = fn()
    return kept, grouped


SCOPES = [
    dict(),
    dict(allowed_library_ids=frozenset({"L2"})),
    dict(allowed_library_ids=frozenset()),
    dict(parent_id="L1"),
    dict(parent_id="L1", allowed_library_ids=frozenset({"L2"})),
    dict(include_types=["Audio", "MusicAlbum"]),
    dict(exclude_types=["Audio"], parent_id="L2"),
    dict(user_id="u1", include_types=["Movie"]),
]


@pytest.mark.parametrize("kind", ["Genre", "MusicGenre", "Studio", "MusicArtist", "AlbumArtist", "Year"])
def test_name_lists_from_kept_counts_match_the_grouped_query(engine, monkeypatch, kind):
    from sqlalchemy.orm import Session

    with engine.begin() as conn:
        _library(conn)
    with Session(engine) as s:
        for scope in SCOPES:
            for extra in (dict(), dict(descending=True), dict(start_index=1, limit=2), dict(limit=3),
                          dict(search_term="o"), dict(name_starts_with="a"), dict(with_counts=False),
                          dict(start_index=0, limit=2, enable_total_record_count=False),
                          # the same shapes again with other values: the statements are built once per
                          # shape (by_name._kept_statements) and must answer for the values bound now
                          dict(start_index=2, limit=1), dict(search_term="e"), dict(search_term="50%_\\"),
                          dict(name_starts_with="z"), dict(name_starts_with_or_greater="c", name_less_than="t"),
                          dict(name_starts_with_or_greater="m", name_less_than="z")):
                def run(scope=scope, extra=extra):
                    nq = NameQuery(kind=kind, scope=ItemQuery(recursive=True, **scope), **extra)
                    entries, total = list_names(s, nq)
                    return [(e.kind, e.name, e.id, e.counts) for e in entries], total

                kept, grouped = _both_ways(monkeypatch, s, run)
                assert kept == grouped, (scope, extra)
        # the kept path did answer (a simple scope) and found the artist named both ways once
        nq = NameQuery(kind="MusicArtist", scope=ItemQuery(recursive=True), search_term="both")
        assert facets.simple_scope(s, nq.scope, ("CollectionFolder",), "root") is not None
        entries, _ = list_names(s, nq)
        not_owned = sum(1 for n in range(120) if n % 3 == 0 and n % 17 != 5)
        assert [(e.name, e.counts["ChildCount"]) for e in entries] == [("BOTH", not_owned)]


def test_filters_from_kept_counts_match_the_grouped_query(engine, monkeypatch):
    from sqlalchemy.orm import Session

    with engine.begin() as conn:
        _library(conn)
    with Session(engine) as s:
        for scope in SCOPES:
            def run(scope=scope):
                q = ItemQuery(recursive=True, **scope)
                return facets.filter_values(s, q) or filter_values(s, q)

            kept, grouped = _both_ways(monkeypatch, s, run)
            assert kept == grouped, scope
            if not scope:
                assert kept["Genre"] and kept["Tag"] and kept["Year"] and kept["OfficialRating"]


def test_scopes_the_counts_cannot_answer_take_the_grouped_query(engine):
    from sqlalchemy.orm import Session

    from server.library.catalog.query import ParentalRules

    with engine.begin() as conn:
        _library(conn)
    with Session(engine) as s:
        structural, root = ("CollectionFolder",), "root"
        assert facets.simple_scope(s, ItemQuery(recursive=True, parental=ParentalRules(max_rating=5)),
                                   structural, root) is None
        assert facets.simple_scope(s, ItemQuery(recursive=True, genres=["rock"]), structural, root) is None
        assert facets.simple_scope(s, ItemQuery(recursive=True, parent_id="it1"), structural, root) is None
        assert facets.simple_scope(s, ItemQuery(recursive=False, parent_id="L1"), structural, root) is None
        assert facets.simple_scope(s, ItemQuery(recursive=True, is_favorite=True), structural, root) is None


def test_lists_counting_a_playlist_take_the_exact_path(engine):
    """``facets.counts_playlists`` (read on the DB-API cursor): a user's scope that would count a
    Playlist row (a playlist given a genre or a year by hand) is one the kept counts cannot answer
    (private playlists are per user); without such a row, or for a scope that leaves playlists
    out, they can."""
    from sqlalchemy.orm import Session

    from server.db.handles import item_field_counts, item_value_counts

    with engine.begin() as conn:
        _library(conn)
    users = facets.Scope(None, (), None, (), hide_playlists=True)
    everyone = facets.Scope(None, (), None, (), hide_playlists=False)
    no_playlists = facets.Scope(None, (), None, ("Playlist",), hide_playlists=True)
    for table in (item_value_counts, item_field_counts):
        with Session(engine) as s:
            assert not facets.counts_playlists(s, table, users)
        with engine.begin() as conn:
            if table is item_value_counts:
                conn.execute(table.insert().values(kind="Genre", clean_value="mixtape", value="Mixtape",
                                                   library_id="", item_type="Playlist", item_count=1))
            else:
                conn.execute(table.insert().values(facet="Year", value="1999", library_id="", item_type="Playlist",
                                                   item_count=1))
        with Session(engine) as s:
            assert facets.counts_playlists(s, table, users)
            assert not facets.counts_playlists(s, table, everyone)
            assert not facets.counts_playlists(s, table, no_playlists)
        with engine.begin() as conn:
            conn.execute(table.update().where(table.c.item_type == "Playlist").values(item_count=0))
        with Session(engine) as s:
            assert not facets.counts_playlists(s, table, users)  # (counted down to 0)
