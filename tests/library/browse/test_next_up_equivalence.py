"""Next Up (server/library/browse/tv.py ``next_up_ids``, one statement per shape over the
expression index ix_items_episode_order) gives exactly what the rules compute when spelled out
in Python, on a varied library: several users and libraries, seasons out of order, specials,
episodes without numbers, virtual (missing) episodes, alternate versions (owned rows), ties in
numbering broken by sort name, played/resumed/unplayed states and play dates, and every
combination of rewatching, resumable, a date cutoff, a parent (library, series or season), a
series and the allowed libraries. Runs on SQLite and, with REELROOM_TEST_DATABASE_URL, on
PostgreSQL. Played states change between rounds, so the cached statements are checked against
changing data too."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from server.db import migrate
from server.db.dialect import normalize_url
from server.library.browse.tv import NextUpQuery, next_up_ids
from tests.conftest import ON_POSTGRES, create_test_database, drop_test_database

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(
    not ON_POSTGRES, reason="REELROOM_TEST_DATABASE_URL does not name a PostgreSQL server"))]

COLUMNS = ("id, type, media_type, is_folder, name, sort_name, date_created, genres_json, studios_json, tags_json, "
           "artists_json, album_artists_json, provider_ids_json, media_streams_json, chapters_json, images_json, "
           "is_locked, locked_fields_json, is_virtual, library_id, owner_id, series_id, season_id, parent_id, "
           "parent_index_number, index_number")
INSERT = text(f"INSERT INTO items ({COLUMNS}) VALUES (:id, :type, 'Video', :folder, :name, :sort, :created, '[]', '[]', "
              "'[]', '[]', '[]', '{}', '[]', '[]', '[]', false, '[]', :virtual, :lib, :owner, :series, :season, "
              ":parent, :pin, :num)")
USERS = ["u1", "u2"]
NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(params=BACKENDS)
def engine(request, tmp_path):
    url = f"sqlite:///{tmp_path / 'nextup.db'}" if request.param == "sqlite" else create_test_database()
    eng = create_engine(normalize_url(url))
    migrate.upgrade(eng, url)
    yield eng
    eng.dispose()
    if request.param != "sqlite":
        drop_test_database(url)


def _library(conn, rnd: random.Random) -> list[dict]:
    """Series in two libraries; returns the episode rows as dicts."""
    episodes: list[dict] = []
    base = {"media": "Video", "virtual": False, "owner": None, "pin": None, "num": None}
    for u in USERS:
        conn.execute(text("INSERT INTO users (id, name, password_hash, policy_json, configuration_json, date_created, "
                          "invalid_login_attempts) "
                          "VALUES (:id, :id, '', '{}', '{}', :now, 0)"), {"id": u, "now": NOW})
    for k in range(14):
        lib = "L1" if k % 3 else "L2"
        sid = f"s{k:02d}"
        conn.execute(INSERT, {**base, "id": sid, "type": "Series", "folder": True, "name": sid, "sort": sid,
                              "created": NOW, "lib": lib, "series": None, "season": None, "parent": lib})
        seasons = rnd.sample([0, 1, 2, 3], rnd.randint(1, 3))
        for sn in seasons:
            season_id = f"{sid}-S{sn}"
            conn.execute(INSERT, {**base, "id": season_id, "type": "Season", "folder": True, "name": season_id,
                                  "sort": season_id, "created": NOW, "lib": lib, "series": sid, "season": None,
                                  "parent": sid, "num": sn})
            for n in range(rnd.randint(1, 6)):
                eid = f"{season_id}-E{n}"
                row = {**base, "id": eid, "type": "Episode", "folder": False, "name": eid,
                       "sort": rnd.choice([eid, f"z{eid}", f"a{eid}"]), "created": NOW, "lib": lib,
                       "series": sid, "season": season_id, "parent": season_id,
                       "pin": rnd.choice([sn, sn, sn, None]), "num": rnd.choice([n + 1, n + 1, n + 1, None, 1]),
                       "virtual": rnd.random() < 0.1}
                conn.execute(INSERT, row)
                episodes.append(row)
                if rnd.random() < 0.1:  # an alternate version: an owned row, never Next Up itself
                    version = {**row, "id": f"{eid}-v", "owner": eid, "virtual": False}
                    conn.execute(INSERT, version)
                    episodes.append(version)
    return episodes


def _play_states(conn, rnd: random.Random, episodes: list[dict]) -> dict[tuple[str, str], dict]:
    conn.execute(text("DELETE FROM user_data"))
    state: dict[tuple[str, str], dict] = {}
    for user in USERS:
        for e in episodes:
            roll = rnd.random()
            if roll < 0.55:
                continue
            played = roll < 0.85
            row = {"user_id": user, "item_id": e["id"], "played": played, "play_count": int(played),
                   "is_favorite": False, "playback_position_ticks": 0 if played or rnd.random() < 0.5 else 5_000_000,
                   "last_played_date": NOW - timedelta(days=rnd.randint(0, 60), minutes=rnd.randint(0, 59))}
            state[(user, e["id"])] = row
    conn.execute(text("INSERT INTO user_data (user_id, item_id, played, play_count, is_favorite, "
                      "playback_position_ticks, last_played_date) VALUES (:user_id, :item_id, :played, :play_count, "
                      ":is_favorite, :playback_position_ticks, :last_played_date)"), list(state.values()))
    return state


def _expected(episodes: list[dict], state: dict, user: str, nq: NextUpQuery, allowed: frozenset[str] | None) -> list[str]:
    """The rules, spelled out: per watched series the deciding played episode (furthest along, or
    with rewatching the most recently played), then the first later episode in play order that
    is not virtual, not played (unless rewatching) and not resumed (unless resumable); series most
    recently watched first."""
    def order(e: dict) -> tuple:
        return (1 if e["pin"] is None else e["pin"], 0 if e["num"] is None else e["num"])

    def ud(e: dict) -> dict | None:
        return state.get((user, e["id"]))

    by_series: dict[str, list[dict]] = {}
    for e in episodes:
        by_series.setdefault(e["series"], []).append(e)
    picked: list[tuple[datetime, str, str]] = []
    for sid, eps in by_series.items():
        def in_scope(e: dict, sid: str = sid) -> bool:
            if e["owner"] is not None or order(e)[0] == 0:
                return False
            if nq.series_id and sid != nq.series_id:
                return False
            if nq.parent_id and nq.parent_id not in (e["lib"], e["series"], e["season"]):
                return False
            return allowed is None or e["lib"] in allowed

        played = [e for e in eps if in_scope(e) and (ud(e) or {}).get("played")]
        if not played:
            continue
        last_date = max(ud(e)["last_played_date"] for e in played)
        if nq.date_cutoff is not None and last_date < nq.date_cutoff:
            continue
        if nq.enable_rewatching:
            decide = max(played, key=lambda e: (ud(e)["last_played_date"], order(e)))
        else:
            decide = max(played, key=order)
        after = [e for e in eps if e["owner"] is None and not e["virtual"] and order(e)[0] != 0
                 and order(e) > order(decide)
                 and (nq.enable_rewatching or not (ud(e) or {}).get("played"))
                 and (nq.enable_resumable or not (ud(e) or {}).get("playback_position_ticks"))]
        if after:
            first = min(after, key=lambda e: (*order(e), e["sort"], e["id"]))
            picked.append((last_date, sid, first["id"]))
    picked.sort(key=lambda p: (-p[0].timestamp(), p[1]))
    return [p[2] for p in picked]


def test_next_up_equals_the_rules_spelled_out(engine):
    rnd = random.Random(7)
    with engine.begin() as conn:
        episodes = _library(conn, rnd)
    checked = 0
    for round_ in range(3):
        with engine.begin() as conn:
            state = _play_states(conn, rnd, episodes)
        # ties (two rows both "episode 1", equal play dates) decide alike: tied rows share their
        # place in play order, so the episodes after them are the same
        with Session(engine) as s:
            for user, rewatch, resumable, cutoff, parent, series, allowed in itertools.product(
                    USERS, (False, True), (True, False), (None, NOW - timedelta(days=20)),
                    (None, "L1", "s04", "s04-S1"), (None, "s05"), (None, frozenset({"L1"}))):
                nq = NextUpQuery(series_id=series, parent_id=parent, date_cutoff=cutoff,
                                 enable_rewatching=rewatch, enable_resumable=resumable)
                found = next_up_ids(s, user, nq, allowed)
                expected = _expected(episodes, state, user, nq, allowed)
                assert found == expected, (round_, user, nq, allowed)
                checked += len(expected)
    assert checked > 100  # the library gives real answers to compare, not empty lists

