"""Sorting on a column that can be NULL puts the NULLs where Jellyfin does (its SQLite order:
NULL is the smallest value, first when ascending and last when descending), on SQLite and
PostgreSQL alike (PostgreSQL's own default is the other way round). Run on PostgreSQL with
``bash tests/with_postgres.sh .venv/bin/python -m pytest tests/library/query/test_null_order.py``."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tests.conftest import complete_wizard, start_server, stop_server
from tests.library.query.factory import Factory

# Every sort key whose value can be NULL for an item (PlayCount, IsPlayed and the like read a
# missing user-data row as 0/false, so they never meet a NULL).
NULLABLE_SORTS = ("DatePlayed", "SeriesDatePlayed", "PremiereDate", "StartDate", "AirTime", "ProductionYear",
                  "CommunityRating", "CriticRating", "OfficialRating", "Runtime", "IndexNumber",
                  "ParentIndexNumber", "AiredEpisodeOrder", "Album", "SeriesSortName", "VideoBitRate")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    live = start_server(tmp_path_factory.mktemp("nullorder") / "data")
    complete_wizard(live)
    f = Factory(live)
    lib = f.library("Films", "movies")
    with live.admin() as c:
        user_id = c.get("/Users/Me").json()["Id"]

    def movie(name: str, n: int) -> str:
        return f.item(lib, "Movie", name, production_year=1990 + n, community_rating=5.0 + n, critic_rating=50.0 + n,
                      official_rating=f"TV-{n}", premiere_date=datetime(1990 + n, 1, 1, tzinfo=UTC),
                      run_time_ticks=n * 10**10, index_number=n, parent_index_number=n, album=f"Album {n}",
                      series_name=f"Series {n}", bitrate=n * 10**6)

    low, high = movie("Low", 1), movie("High", 2)
    f.item(lib, "Movie", "Blank")  # every nullable column left NULL, never played
    f.user_data(user_id, low, played=True, play_count=1, last_played_date=datetime(2024, 1, 1, tzinfo=UTC))
    f.user_data(user_id, high, played=True, play_count=2, last_played_date=datetime(2024, 2, 1, tzinfo=UTC))
    yield {"live": live, "lib": lib}
    stop_server(live)


@pytest.mark.parametrize("sort", NULLABLE_SORTS)
def test_nulls_sort_first_ascending_and_last_descending(world, sort: str) -> None:
    with world["live"].admin() as c:
        def order(direction: str) -> list[str]:
            r = c.get("/Items", params={"parentId": world["lib"], "recursive": "true", "includeItemTypes": "Movie",
                                        "sortBy": sort, "sortOrder": direction})
            assert r.status_code == 200, r.text
            return [i["Name"] for i in r.json()["Items"]]

        assert order("Ascending") == ["Blank", "Low", "High"]
        assert order("Descending") == ["High", "Low", "Blank"]
