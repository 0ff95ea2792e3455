"""The TMDb and MusicBrainz providers against fake services: paths, parameters, mapping of
replies to search results, metadata and images, failures and MusicBrainz's rate limit."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from server.metadata.providers import (
    LookupItem,
    MusicBrainzProvider,
    ProviderError,
    SearchInfo,
    TmdbProvider,
)
from server.metadata.settings import MUSICBRAINZ_DEFAULTS, TMDB_DEFAULTS
from tests.metadata.fakes import (
    ARTIST,
    RELEASE,
    RELEASE_GROUP,
    TMDB_KEY,
    FakeMusicBrainz,
    FakeTmdb,
    closed_port,
)


def tmdb_for(url: str, **extra) -> TmdbProvider:
    settings = {**TMDB_DEFAULTS, "BaseUrl": url, "ImageBaseUrl": url + "/t/p/", "ApiKey": TMDB_KEY, **extra}
    return TmdbProvider(lambda: settings)


def musicbrainz_for(url: str, **extra) -> MusicBrainzProvider:
    settings = {**MUSICBRAINZ_DEFAULTS, "BaseUrl": url, "CoverArtBaseUrl": url, **extra}
    return MusicBrainzProvider(lambda: settings)


async def test_tmdb_movie_search_maps_results_and_sends_key_and_language(fake_tmdb: FakeTmdb):
    tmdb = tmdb_for(fake_tmdb.url)
    try:
        results = await tmdb.search("Movie", SearchInfo(name="Fight Club", year=1999, language="en", country="US"))
    finally:
        await tmdb.aclose()
    assert [r.Name for r in results] == ["Fight Club", "Fight Club: Members Only"]
    first = results[0]
    assert first.ProviderIds == {"Tmdb": "550"}
    assert first.ProductionYear == 1999
    assert first.PremiereDate == datetime(1999, 10, 15, tzinfo=UTC)
    assert first.SearchProviderName == "TheMovieDb"
    assert first.ImageUrl == f"{fake_tmdb.url}/t/p/w500/poster550.jpg"
    assert first.Overview.startswith("An insomniac")
    assert results[1].ImageUrl is None  # no poster
    request = fake_tmdb.requests[-1]
    assert request.path == "/3/search/movie"
    assert request.query["query"] == "Fight Club" and request.query["year"] == "1999"
    assert request.query["api_key"] == TMDB_KEY and request.query["language"] == "en-US"
    assert request.headers["user-agent"].startswith("Reelroom/")


async def test_tmdb_search_retries_without_a_wrong_year(fake_tmdb: FakeTmdb):
    tmdb = tmdb_for(fake_tmdb.url)
    try:
        results = await tmdb.search("Movie", SearchInfo(name="Fight Club", year=2001))
    finally:
        await tmdb.aclose()
    assert results and results[0].Name == "Fight Club"
    assert [r.query.get("year") for r in fake_tmdb.requests] == ["2001", None]


async def test_tmdb_search_by_imdb_id_finds_the_record(fake_tmdb: FakeTmdb):
    tmdb = tmdb_for(fake_tmdb.url)
    try:
        results = await tmdb.search("Movie", SearchInfo(provider_ids={"Imdb": "tt0137523"}))
    finally:
        await tmdb.aclose()
    assert len(results) == 1
    assert results[0].ProviderIds == {"Tmdb": "550", "Imdb": "tt0137523"}
    assert fake_tmdb.paths() == ["/3/find/tt0137523", "/3/movie/550"]
    assert fake_tmdb.requests[0].query["external_source"] == "imdb_id"


async def test_tmdb_movie_metadata(fake_tmdb: FakeTmdb):
    tmdb = tmdb_for(fake_tmdb.url)
    try:
        meta = await tmdb.get_metadata("Movie", {"Tmdb": "550"}, "en", "US")
        german = await tmdb.get_metadata("Movie", {"Tmdb": "550"}, "de", "DE")
    finally:
        await tmdb.aclose()
    assert meta is not None and german is not None
    assert meta.name == "Fight Club" and meta.tagline == "Mischief. Mayhem. Soap."
    assert meta.production_year == 1999 and meta.community_rating == 8.4
    assert meta.run_time_ticks == 139 * 60 * 10_000_000
    assert meta.genres == ["Drama", "Thriller"]
    assert meta.studios == ["Regency Enterprises", "Fox 2000 Pictures"]
    assert meta.tags == ["dual identity", "insomnia"]
    assert meta.official_rating == "R"
    assert meta.provider_ids == {"Tmdb": "550", "Imdb": "tt0137523"}
    actors = [(p.name, p.role) for p in meta.people if p.kind == "Actor"]
    assert actors == [("Edward Norton", "The Narrator"), ("Brad Pitt", "Tyler Durden"),
                      ("Helena Bonham Carter", "Marla Singer")]
    crew = {(p.name, p.kind) for p in meta.people if p.kind != "Actor"}
    assert crew == {("David Fincher", "Director"), ("Chuck Palahniuk", "Writer"), ("Jim Uhls", "Writer")}
    assert german.name == "Fight Club (DE)" and german.official_rating == "DE-18"
    assert fake_tmdb.requests[0].query["append_to_response"] == "credits,release_dates,keywords"


async def test_tmdb_series_metadata_and_season_images(fake_tmdb: FakeTmdb):
    tmdb = tmdb_for(fake_tmdb.url)
    try:
        meta = await tmdb.get_metadata("Series", {"Tmdb": "1399"})
        season = await tmdb.get_images(LookupItem(kind="Season", index_number=1,
                                                  series_provider_ids={"Tmdb": "1399"}))
    finally:
        await tmdb.aclose()
    assert meta is not None
    assert meta.provider_ids == {"Tmdb": "1399", "Imdb": "tt0944947", "Tvdb": "121361"}
    assert meta.studios == ["HBO"] and meta.official_rating == "TV-MA"
    assert meta.end_date == datetime(2019, 5, 19, tzinfo=UTC)
    assert meta.run_time_ticks == 60 * 60 * 10_000_000
    assert [(i.Type, i.Url) for i in season] == [("Primary", f"{fake_tmdb.url}/t/p/original/got-s1.jpg")]


async def test_tmdb_movie_images(fake_tmdb: FakeTmdb):
    tmdb = tmdb_for(fake_tmdb.url)
    try:
        images = await tmdb.get_images(LookupItem(kind="Movie", provider_ids={"Tmdb": "550"}))
    finally:
        await tmdb.aclose()
    by_type = {}
    for image in images:
        by_type.setdefault(image.Type, []).append(image)
    assert sorted(by_type) == ["Backdrop", "Logo", "Primary"]
    poster = by_type["Primary"][1]
    assert poster.Url == f"{fake_tmdb.url}/t/p/original/poster550.jpg"
    assert poster.ThumbnailUrl == f"{fake_tmdb.url}/t/p/w185/poster550.jpg"
    assert (poster.Width, poster.Height, poster.Language, poster.VoteCount) == (60, 90, "en", 12)
    assert poster.ProviderName == "TheMovieDb" and poster.RatingType == "Score"
    assert by_type["Backdrop"][0].Language is None


async def test_tmdb_without_key_is_disabled_and_wrong_key_is_an_error(fake_tmdb: FakeTmdb):
    assert not tmdb_for(fake_tmdb.url, ApiKey="").is_enabled()
    tmdb = tmdb_for(fake_tmdb.url, ApiKey="wrong")
    try:
        with pytest.raises(ProviderError, match="HTTP 401"):
            await tmdb.search("Movie", SearchInfo(name="Fight Club"))
    finally:
        await tmdb.aclose()


async def test_provider_down_or_slow_raises_provider_error(fake_tmdb: FakeTmdb):
    down = tmdb_for(f"http://127.0.0.1:{closed_port()}")
    fake_tmdb.delay = 60.0  # held until released: only the client's own timeout ends the wait
    slow = tmdb_for(fake_tmdb.url, TimeoutSeconds=0.3)
    try:
        with pytest.raises(ProviderError, match="unreachable"):
            await down.search("Movie", SearchInfo(name="Fight Club"))
        with pytest.raises(ProviderError, match="did not answer"):
            await slow.search("Movie", SearchInfo(name="Fight Club"))
        # it gave up on its own: the provider still holds the request
        assert fake_tmdb.answered == 0 and len(fake_tmdb.requests) >= 1
    finally:
        await down.aclose()
        await slow.aclose()


async def test_musicbrainz_album_search(fake_musicbrainz: FakeMusicBrainz):
    mb = musicbrainz_for(fake_musicbrainz.url)
    try:
        results = await mb.search("MusicAlbum", SearchInfo(name="OK Computer", artists=["Radiohead"]))
    finally:
        await mb.aclose()
    assert len(results) == 1
    album = results[0]
    assert album.Name == "OK Computer" and album.ProductionYear == 1997
    assert album.ProviderIds == {"MusicBrainzReleaseGroup": RELEASE_GROUP, "MusicBrainzAlbum": RELEASE}
    assert album.AlbumArtist.Name == "Radiohead"
    assert album.AlbumArtist.ProviderIds == {"MusicBrainzArtist": ARTIST}
    assert [a.Name for a in album.Artists] == ["Radiohead"]
    assert album.SearchProviderName == "MusicBrainz"
    assert album.ImageUrl == f"{fake_musicbrainz.url}/release-group/{RELEASE_GROUP}/front-250"
    request = fake_musicbrainz.requests[0]
    assert request.path == "/ws/2/release-group"
    assert request.query["query"] == 'releasegroup:"OK Computer" AND artist:"Radiohead"'
    assert request.query["fmt"] == "json"
    assert request.headers["user-agent"].startswith("Reelroom/")
    assert request.headers["user-agent"].endswith("( https://example.invalid )")


async def test_musicbrainz_album_metadata_artist_search_and_cover_art(fake_musicbrainz: FakeMusicBrainz):
    mb = musicbrainz_for(fake_musicbrainz.url)
    try:
        meta = await mb.get_metadata("MusicAlbum", {"MusicBrainzAlbum": RELEASE})
        artists = await mb.search("MusicArtist", SearchInfo(name="Radiohead"))
        covers = await mb.get_images(LookupItem(kind="MusicAlbum", provider_ids={"MusicBrainzAlbum": RELEASE}))
    finally:
        await mb.aclose()
    assert meta is not None
    assert meta.name == "OK Computer" and meta.premiere_date == datetime(1997, 5, 21, tzinfo=UTC)
    assert meta.album_artists == ["Radiohead"] and meta.studios == ["Parlophone"]
    assert meta.genres == ["Alternative Rock", "Art Rock"]
    assert meta.provider_ids == {"MusicBrainzAlbum": RELEASE, "MusicBrainzReleaseGroup": RELEASE_GROUP,
                                 "MusicBrainzAlbumArtist": ARTIST}
    assert [(a.Name, a.ProviderIds, a.Overview) for a in artists] == [
        ("Radiohead", {"MusicBrainzArtist": ARTIST}, "English rock band")]
    assert [(c.Type, c.Url) for c in covers] == [("Primary", fake_musicbrainz.url + "/img/front.jpg"),
                                                 ("BoxRear", fake_musicbrainz.url + "/img/back.jpg")]
    lookup = fake_musicbrainz.requests[0]
    assert lookup.path == f"/ws/2/release/{RELEASE}" and "artist-credits" in lookup.query["inc"]


async def test_musicbrainz_requests_are_spaced_one_second_apart(fake_musicbrainz: FakeMusicBrainz):
    mb = musicbrainz_for(fake_musicbrainz.url)
    try:
        await asyncio.gather(
            mb.search("MusicAlbum", SearchInfo(name="OK Computer")),
            mb.search("MusicArtist", SearchInfo(name="Radiohead")),
            mb.get_metadata("MusicArtist", {"MusicBrainzArtist": ARTIST}),
        )
    finally:
        await mb.aclose()
    times = [r.at for r in fake_musicbrainz.requests if r.path.startswith("/ws/2/")]
    assert len(times) == 3
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert all(gap >= 1.0 for gap in gaps), gaps  # never two requests closer than a second
