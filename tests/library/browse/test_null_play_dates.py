"""An item marked played without a date (POST /UserPlayedItems with no datePlayed, an import)
has a NULL last played date. "Most recently played first" puts it last on SQLite (NULL is its
smallest value) and must do the same on PostgreSQL (NULL is its largest, first when descending):
Next Up's rewatching choice and its series order, and the movie recommendations' recently played
seeds. Runs on PostgreSQL with
``bash tests/with_postgres.sh .venv/bin/python -m pytest tests/library/browse/test_null_play_dates.py``."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.library.query.factory import Factory


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    live = start_server(tmp_path_factory.mktemp("nullplayed") / "data")
    complete_wizard(live)
    f = Factory(live)
    with live.admin() as c:
        user_id = c.get("/Users/Me").json()["Id"]
    shows = f.library("Shows", "tvshows")
    names: dict[str, str] = {}

    def series(name: str, episodes: int) -> list[str]:
        sid = f.item(shows, "Series", name)
        season = f.item(shows, "Season", f"{name} Season 1", parent_id=sid, series_id=sid, index_number=1)
        out = []
        for n in range(1, episodes + 1):
            eid = f.item(shows, "Episode", f"{name} E{n}", parent_id=season, series_id=sid, season_id=season,
                         series_name=name, parent_index_number=1, index_number=n)
            names[eid] = f"{name} E{n}"
            out.append(eid)
        return out

    dated = series("Dated", 4)
    undated = series("Undated", 3)
    # Dated: E1 marked played with no date, E3 played in 2024; with rewatching the most recently
    # played (E3) decides, so Next Up is E4 (E1 deciding would give E2)
    f.user_data(user_id, dated[0], played=True, play_count=1, last_played_date=None)
    f.user_data(user_id, dated[2], played=True, play_count=1, last_played_date=datetime(2024, 3, 1, tzinfo=UTC))
    # Undated: only E1, marked played with no date: the series has no play date and comes last
    f.user_data(user_id, undated[0], played=True, play_count=1, last_played_date=None)

    films = f.library("Films", "movies")
    movies = {name: f.item(films, "Movie", name, genres=["Drama"]) for name in
              ("Seen Dated", "Seen Undated", "Fresh One", "Fresh Two")}
    f.user_data(user_id, movies["Seen Undated"], played=True, play_count=1, last_played_date=None)
    f.user_data(user_id, movies["Seen Dated"], played=True, play_count=1,
                last_played_date=datetime(2024, 5, 1, tzinfo=UTC))
    yield {"live": live, "user": user_id, "names": names, "movies": movies}
    stop_server(live)


def _next_up(live: LiveServer, user_id: str, names: dict[str, str], rewatching: bool) -> list[str]:
    with live.admin() as c:
        r = c.get("/Shows/NextUp", params={"userId": user_id, "enableRewatching": str(rewatching).lower(),
                                          "fields": "Path"})
        assert r.status_code == 200, r.text
        return [names[i["Id"]] for i in r.json()["Items"]]


def test_next_up_rewatching_decides_by_the_newest_dated_play_and_undated_series_come_last(world) -> None:
    assert _next_up(world["live"], world["user"], world["names"], rewatching=True) == ["Dated E4", "Undated E2"]


def test_next_up_without_rewatching_orders_undated_series_last(world) -> None:
    assert _next_up(world["live"], world["user"], world["names"], rewatching=False) == ["Dated E4", "Undated E2"]


def test_recommendations_seed_from_the_newest_dated_play_first(world) -> None:
    with world["live"].admin() as c:
        r = c.get("/Movies/Recommendations", params={"userId": world["user"], "categoryLimit": 1, "itemLimit": 5})
        assert r.status_code == 200, r.text
        seeds = [rec["BaselineItemName"] for rec in r.json() if rec["RecommendationType"] == "SimilarToRecentlyPlayed"]
    assert seeds == ["Seen Dated"]
