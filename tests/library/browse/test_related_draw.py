"""The candidate draws of instant mixes and Similar (server/library/browse/related.py) on a
library large enough that a mix reads random ranges of a genre instead of all of it: every
drawn track is audio, not an extra, in the viewer's libraries and allowed by their parental
rules; a draw has no duplicates, the seed song first; draws differ and together cover the
genre; a limit above the candidates gives all of them. Similar ranks by shared values and keeps
to the seed's kind, the viewer's libraries and parental rules. On SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from server.db import migrate
from server.db.dialect import normalize_url
from server.library.browse import related
from server.library.browse.related import Seed, mix_rows, similar_rows
from server.library.catalog.query import ParentalRules, get_rows
from tests.conftest import ON_POSTGRES, create_test_database, drop_test_database

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(
    not ON_POSTGRES, reason="REELROOM_TEST_DATABASE_URL does not name a PostgreSQL server"))]

ITEM_COLUMNS = ("id, type, media_type, is_folder, name, sort_name, date_created, genres_json, studios_json, "
                "tags_json, artists_json, album_artists_json, provider_ids_json, media_streams_json, chapters_json, "
                "images_json, is_locked, locked_fields_json, is_virtual, library_id, owner_id, official_rating")
INSERT_ITEM = text(f"INSERT INTO items ({ITEM_COLUMNS}) VALUES (:id, :type, 'Audio', false, :name, :name, :created, "
                   "'[]', '[]', '[]', '[]', '[]', '{}', '[]', '[]', '[]', false, '[]', false, :lib, :owner, :rating)")
INSERT_VALUE = text("INSERT INTO item_values (item_id, kind, clean_value, value) VALUES (:id, :kind, :clean, :value)")


@pytest.fixture(params=BACKENDS)
def library(request, tmp_path):
    """600 rock tracks in L1 (40 of them rated R, 30 by 'band'), 200 rock tracks in L2, 50 rock
    albums and 20 owned rock extras in L1, 100 jazz tracks in L1 (10 by 'band')."""
    url = f"sqlite:///{tmp_path / 'draw.db'}" if request.param == "sqlite" else create_test_database()
    eng = create_engine(normalize_url(url))
    migrate.upgrade(eng, url)
    groups: dict[str, list[str]] = {}
    now = datetime.now(UTC)
    with eng.begin() as conn:
        def add(group: str, n: int, *, type: str = "Audio", lib: str = "L1", genre: str = "Rock",
                owner: str | None = None, rating: str | None = None, artist: str | None = None) -> None:
            for _ in range(n):
                item_id = uuid.uuid4().hex
                conn.execute(INSERT_ITEM, {"id": item_id, "type": type, "name": f"{group} {item_id[:6]}", "created": now,
                                           "lib": lib, "owner": owner, "rating": rating})
                conn.execute(INSERT_VALUE, {"id": item_id, "kind": "Genre", "clean": genre.lower(), "value": genre})
                if artist:
                    conn.execute(INSERT_VALUE, {"id": item_id, "kind": "Artist", "clean": artist, "value": artist})
                groups.setdefault(group, []).append(item_id)

        add("rock", 530)
        add("rated", 40, rating="R")
        add("band rock", 30, artist="band")
        add("other library", 200, lib="L2")
        add("albums", 50, type="MusicAlbum")
        add("extras", 20, owner=groups["rock"][0])
        add("jazz", 90, genre="Jazz")
        add("band jazz", 10, genre="Jazz", artist="band")
    yield eng, groups
    eng.dispose()
    if request.param != "sqlite":
        drop_test_database(url)


def _seed(genres: tuple[str, ...] = (), artists: tuple[str, ...] = (), row=None) -> Seed:
    seed = Seed(row)
    for g in genres:
        seed.add("Genre", g)
    for a in artists:
        seed.add("Artist", a)
    return seed


def test_a_mix_draws_playable_tracks_of_the_viewer_at_random(library):
    eng, groups = library
    l1_rock = set(groups["rock"]) | set(groups["rated"]) | set(groups["band rock"])
    with Session(eng) as s:
        draws = []
        for _ in range(12):
            rows = mix_rows(s, _seed(("Rock",)), 40, frozenset({"L1"}))
            ids = [r.id for r in rows]
            assert len(ids) == len(set(ids)) == 40
            assert set(ids) <= l1_rock  # audio, not an extra or an album, in L1 only
            draws.append(ids)
        assert len({tuple(d) for d in draws}) == len(draws)  # every draw is another
        assert len(set().union(*draws)) > 200  # from all over the genre, not one run of ids
        # parental rules hold on the draw
        kid = ParentalRules(max_rating=10)
        for _ in range(5):
            ids = {r.id for r in mix_rows(s, _seed(("Rock",)), 40, frozenset({"L1"}), kid)}
            assert len(ids) == 40 and not ids & set(groups["rated"])
        # asking for more than there is gives every candidate once
        everything = [r.id for r in mix_rows(s, _seed(("Rock",)), 5000, None)]
        assert len(everything) == len(set(everything))
        assert set(everything) == l1_rock | set(groups["other library"])


def test_a_song_mix_starts_with_the_song_and_takes_its_artist(library):
    eng, groups = library
    with Session(eng) as s:
        song = get_rows(s, [groups["band rock"][0]])[groups["band rock"][0]]
        rows = mix_rows(s, _seed(("Rock",), ("band",), row=song), 30, None)
        assert rows[0].id == song.id and len({r.id for r in rows}) == 30
        # an artist's mix (its genres and name) reaches its jazz tracks too
        jazz = set(groups["band jazz"])
        seen: set[str] = set()
        for _ in range(10):
            seen |= {r.id for r in mix_rows(s, _seed(("Rock", "Jazz"), ("band",)), 100, frozenset({"L1"}))}
        assert seen & jazz
        assert seen <= set(groups["rock"]) | set(groups["rated"]) | set(groups["band rock"]) | \
            set(groups["jazz"]) | jazz


@pytest.fixture(params=["read whole", "drawn"])
def big_genre(request, monkeypatch):
    """Similar as it reads a value's ids whole, and as it draws a big value's tier (the rock
    genre's 870 items made "big": related._SIMILAR_BIG lowered)."""
    if request.param == "drawn":
        monkeypatch.setattr(related, "_SIMILAR_BIG", 100)
    return request.param


def test_similar_ranks_keeps_kind_libraries_and_parental_rules(library, big_genre):
    eng, groups = library
    with Session(eng) as s:
        seed_id = groups["band rock"][0]
        seed = _seed(("Rock",), ("band",), row=get_rows(s, [seed_id])[seed_id])
        rows = similar_rows(s, seed, ("Audio",), 12, [], frozenset({"L1"}), [])
        ids = [r.id for r in rows]
        assert len(ids) == 12 and seed_id not in ids
        # the band's other rock tracks share two values: they come first
        assert set(ids) <= set(groups["band rock"]) - {seed_id}
        more = [r.id for r in similar_rows(s, seed, ("Audio",), 100, [], frozenset({"L1"}), [])]
        assert set(more[:29]) == set(groups["band rock"]) - {seed_id}
        assert set(more) <= set(groups["rock"]) | set(groups["rated"]) | set(groups["band rock"]) | \
            set(groups["band jazz"])
        assert not set(more) & set(groups["extras"])
        kid = [r.id for r in similar_rows(s, seed, ("Audio",), 1000, [], None, [],
                                          parental=ParentalRules(max_rating=10))]
        assert kid and not set(kid) & set(groups["rated"]) and set(kid) & set(groups["other library"])
        albums = [r.id for r in similar_rows(s, seed, ("MusicAlbum",), 100, [], None, [])]
        assert set(albums) == set(groups["albums"])


def test_a_drawn_big_tier_ranks_as_the_whole_read(library, monkeypatch):
    """With the big genre's tier drawn, Similar gives the same scores in the same order as with
    its ids read whole (ties at random either way), never the seed or a duplicate, and asks
    again and again cover the tier."""
    eng, groups = library
    with Session(eng) as s:
        seed_id = groups["band rock"][0]
        seed = _seed(("Rock",), ("band",), row=get_rows(s, [seed_id])[seed_id])
        band = set(groups["band rock"]) | set(groups["band jazz"])
        rock = set(groups["rock"]) | set(groups["rated"]) | set(groups["band rock"]) | set(groups["other library"])

        def score(i: str) -> int:
            return (10 if i in rock else 0) + (4 if i in band else 0)

        def ask(limit: int) -> list[str]:
            ids = [r.id for r in similar_rows(s, seed, ("Audio",), limit, [], frozenset({"L1"}), [])]
            assert len(ids) == len(set(ids)) and seed_id not in ids
            return ids

        whole = {n: [score(i) for i in ask(n)] for n in (12, 60, 200)}
        monkeypatch.setattr(related, "_SIMILAR_BIG", 100)
        drawn: list[int] = []
        take = related._BigTier.take

        def counted(self, n: int) -> list[str]:
            out = take(self, n)
            drawn.append(len(out))
            return out

        monkeypatch.setattr(related._BigTier, "take", counted)
        seen: set[str] = set()
        for _ in range(12):
            for n, scores in whole.items():
                ids = ask(n)
                assert [score(i) for i in ids] == scores
                seen.update(ids)
        if eng.dialect.name == "sqlite":
            assert sum(drawn) > 0  # (the tier was drawn, not read)
        else:  # PostgreSQL reads the big value's ids whole, as before
            assert drawn == []
        genre_only = (set(groups["rock"]) | set(groups["rated"])) - band
        # (60 of the tier's ~560 a time: the asks together reach most of it)
        assert len(seen & genre_only) > len(genre_only) // 2


def test_the_playable_test_with_rules_on_the_cursor_equals_the_built_select(library, monkeypatch):
    """A restricted viewer's playable test runs on the DB-API cursor with the rules as driver SQL
    made once per rules and rating list (``query.parental_where``, SQLite): the same tracks and
    the same rows as the select built with ``parental_conditions``, for rating limits, blocked
    and allowed tags and blocked unrated music, wholly hidden, partly hidden and wholly shown
    candidates; then an edit to a rating new to the library (once the rating list is read again,
    as a new content generation does) is judged by the new SQL. On PostgreSQL the select is built."""
    from server.library.browse import related
    from server.library.catalog import query

    eng, groups = library
    every = [i for ids in groups.values() for i in ids]
    with eng.begin() as conn:
        conn.execute(INSERT_VALUE, {"id": groups["rock"][1], "kind": "Tag", "clean": "gore", "value": "gore"})
        conn.execute(INSERT_VALUE, {"id": groups["rock"][2], "kind": "Tag", "clean": "kids", "value": "kids"})
    rule_sets = [ParentalRules(max_rating=10), ParentalRules(max_rating=100), ParentalRules(blocked_tags=("gore",)),
                 ParentalRules(allowed_tags=("kids",)), ParentalRules(block_unrated=("Music",)),
                 ParentalRules(max_rating=10, blocked_tags=("gore",)), ParentalRules()]

    def both(s: Session, rules: ParentalRules, allowed) -> tuple:
        fast_rows: dict = {}
        fast = related._playable_ids(s, every, allowed, rules, fast_rows)
        fast_ids = related._playable_ids(s, every, allowed, rules)
        with monkeypatch.context() as m:
            m.setattr(related, "parental_where", lambda *a: None)
            built_rows: dict = {}
            built = related._playable_ids(s, every, allowed, rules, built_rows)
        assert fast == fast_ids == built == set(built_rows) == set(fast_rows), rules
        assert fast_rows == built_rows, rules
        return fast

    with Session(eng) as s:
        on_cursor = query.parental_where(s, ParentalRules(max_rating=10))
        assert (on_cursor is not None) == (eng.dialect.paramstyle == "qmark")
        for rules in rule_sets:
            for allowed in (None, frozenset({"L1"})):
                both(s, rules, allowed)
        assert not both(s, ParentalRules(max_rating=10), None) & set(groups["rated"])
        assert groups["rock"][1] not in both(s, ParentalRules(blocked_tags=("gore",)), None)
        assert both(s, ParentalRules(allowed_tags=("kids",)), None) == {groups["rock"][2]}
    # a rated track becomes 'TV-Y', a rating the library did not have: shown to a MaxParentalRating 10
    with eng.begin() as conn:
        conn.execute(text("UPDATE items SET official_rating = 'TV-Y' WHERE id = :i"), {"i": groups["rated"][0]})
    query._ratings_cache.clear()  # (what a new content generation does for a Database's session)
    with Session(eng) as s:
        shown = both(s, ParentalRules(max_rating=10), None)
        assert groups["rated"][0] in shown and not shown & set(groups["rated"][1:])


def test_similar_checks_its_candidates_a_few_at_a_time_with_the_same_answer(library, monkeypatch):
    """Similar with a limit checks its candidates (type, extras, libraries, rules) a few more
    than still missing at a time: the same draw (the module's random state replayed) gives the
    same items in the same order as checking every candidate of the batch at once, with fewer
    candidates checked when most qualify."""
    eng, groups = library
    checked: list[int] = []
    qualifying = related._qualifying

    def counting(s, candidates, *args):  # type: ignore[no-untyped-def]
        checked.append(len(candidates))
        return qualifying(s, candidates, *args)

    monkeypatch.setattr(related, "_qualifying", counting)
    with Session(eng) as s:
        seed_id = groups["band rock"][0]
        seed = _seed(("Rock",), ("band",), row=get_rows(s, [seed_id])[seed_id])
        for limit, allowed in ((5, frozenset({"L1"})), (12, None), (40, frozenset({"L2"})), (200, frozenset({"L1"}))):
            state = related._random.getstate()
            checked.clear()
            few = [r.id for r in similar_rows(s, seed, ("Audio",), limit, [], allowed, [])]
            few_checked = sum(checked)
            related._random.setstate(state)
            checked.clear()
            monkeypatch.setattr(related, "_CHECK_AHEAD", 10**6)  # (the whole batch at once)
            whole = [r.id for r in similar_rows(s, seed, ("Audio",), limit, [], allowed, [])]
            monkeypatch.setattr(related, "_CHECK_AHEAD", 3)
            assert few == whole and len(few) == limit, (limit, allowed)
            assert few_checked <= sum(checked), (limit, allowed)
            if limit == 12:
                assert few_checked < sum(checked) / 2, (few_checked, checked)
