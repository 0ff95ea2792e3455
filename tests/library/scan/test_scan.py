"""Scanning a generated library: items, hierarchy, streams, images, values, people and counts."""

from __future__ import annotations

import json
import os

from sqlalchemy import select

from server.db.tables import ItemPerson, ItemValue, Person
from server.library.catalog import ids
from tests.library.conftest import images, items, one, streams


def test_collection_folders(scanned) -> None:
    for kind, lib_id in scanned.extra["libraries"].items():
        folder = one(scanned, id=lib_id)
        assert folder.type == "CollectionFolder" and folder.is_folder and folder.parent_id is None
        assert lib_id == ids.library_id_for_name(kind.title())
    with scanned.admin() as c:
        folders = {f["Name"]: f for f in c.get("/Library/VirtualFolders").json()}
    assert folders["Shows"]["CollectionType"] == "tvshows"
    assert folders["Music"]["Locations"] == [str(scanned.extra["media"] / "music")]
    assert folders["Movies"]["ItemId"] == scanned.extra["libraries"]["movies"]


def test_movie_with_provider_id_nfo_subtitles_and_art(scanned) -> None:
    lib = scanned.extra["libraries"]["movies"]
    movie = one(scanned, type="Movie", name="Inception")
    assert movie.parent_id == lib and movie.library_id == lib
    assert movie.production_year == 2010
    assert json.loads(movie.provider_ids_json)["Tmdb"] == "27205"
    assert movie.overview == "Dreams within dreams."
    assert json.loads(movie.genres_json) == ["Science Fiction", "Action"]
    assert movie.container == "mkv" and movie.width == 160 and movie.height == 120
    assert movie.run_time_ticks and 0.8e7 < movie.run_time_ticks < 1.3e7
    assert movie.size == os.path.getsize(movie.path) and movie.bitrate
    assert movie.sort_name == "inception"
    s = streams(movie)
    embedded = [x for x in s if not x.get("IsExternal")]
    external = [x for x in s if x.get("IsExternal")]
    assert {x["Type"] for x in embedded} == {"Video", "Audio", "Subtitle"}
    top = max(x["Index"] for x in embedded)
    assert [x["Index"] for x in external] == [top + 1, top + 2]
    by_lang = {x["Language"]: x for x in external}
    assert by_lang["ger"]["IsForced"] is True and by_lang["ger"]["Codec"] == "srt"
    assert by_lang["eng"]["Path"].endswith(".en.srt") and by_lang["eng"]["IsExternal"] is True
    assert json.loads(movie.chapters_json)[1]["Name"] == "Ending"
    art = {i["Type"]: i for i in images(movie)}
    assert set(art) == {"Primary", "Backdrop"}
    assert art["Primary"]["Path"].endswith("poster.jpg") and (art["Primary"]["Width"], art["Primary"]["Height"]) == (60, 90)
    assert art["Primary"]["BlurHash"] and art["Primary"]["Tag"]
    assert art["Backdrop"]["Index"] == 0

    def read(s):
        values = {(v.kind, v.clean_value) for v in s.execute(select(ItemValue).where(ItemValue.item_id == movie.id)).scalars()}
        people = s.execute(select(Person.name, ItemPerson.kind, ItemPerson.role).join(
            ItemPerson, ItemPerson.person_id == Person.id).where(ItemPerson.item_id == movie.id)).all()
        return values, {tuple(p) for p in people}

    values, people = scanned.ctx.db.read_sync(read)
    assert {("Genre", "science fiction"), ("Genre", "action"), ("Studio", "warner bros.")} <= values
    assert ("Leonardo DiCaprio", "Actor", "Cobb") in people
    assert ("Christopher Nolan", "Director", None) in people


def test_versions_extras_and_loose_movie(scanned) -> None:
    lib = scanned.extra["libraries"]["movies"]
    blade = [m for m in items(scanned, type="Movie", name="Blade Runner")]
    primary = [m for m in blade if m.owner_id is None]
    assert len(blade) == 2 and len(primary) == 1
    primary = primary[0]
    assert primary.path.endswith("1080p.mkv") and primary.parent_id == lib
    other = next(m for m in blade if m.owner_id)
    assert other.owner_id == primary.id and other.path.endswith("720p.mkv")
    trailer = one(scanned, type="Trailer")
    assert trailer.extra_type == "Trailer" and trailer.owner_id == primary.id
    making = one(scanned, name="Making Of")
    assert making.extra_type == "BehindTheScenes" and making.owner_id == primary.id and making.type == "Video"
    alien = one(scanned, type="Movie", name="Alien")
    assert alien.production_year == 1979 and alien.parent_id == lib and alien.container.startswith("mov")
    assert [i["Type"] for i in images(alien)] == ["Primary"]
    heat = one(scanned, type="Movie", name="Heat")
    cover = images(heat)[0]
    assert cover["Type"] == "Primary" and (cover["Width"], cover["Height"]) == (40, 60)
    assert os.path.basename(cover["Path"]).startswith("embedded-") and heat.id in cover["Path"]


def test_series_seasons_episodes(scanned) -> None:
    lib = scanned.extra["libraries"]["shows"]
    series = one(scanned, type="Series")
    assert (series.name, series.production_year, series.parent_id) == ("Show Name", 2019, lib)
    assert series.status == "Continuing" and series.overview == "A show."
    assert images(series)[0]["Path"].endswith("poster.jpg")
    seasons = {s.index_number: s for s in items(scanned, type="Season")}
    assert set(seasons) == {0, 1, 2}
    assert seasons[0].name == "Specials" and seasons[1].name == "Season 1"
    assert all(s.parent_id == series.id and s.series_id == series.id for s in seasons.values())
    assert images(seasons[1])[0]["Path"].endswith("season01-poster.jpg")
    episodes = {(e.parent_index_number, e.index_number): e for e in items(scanned, type="Episode")}
    assert set(episodes) == {(1, 1), (1, 2), (2, 2), (2, 3), (0, 1)}
    e12 = episodes[(1, 2)]
    assert e12.name == "The Second One" and e12.premiere_date.year == 2019
    assert e12.parent_id == seasons[1].id and e12.season_id == seasons[1].id and e12.series_id == series.id
    assert e12.series_name == "Show Name" and e12.season_name == "Season 1"
    assert episodes[(2, 3)].index_number_end == 4
    assert episodes[(2, 2)].path.endswith("2x02.mkv")
    assert episodes[(0, 1)].parent_id == seasons[0].id
    assert episodes[(1, 1)].sort_name < e12.sort_name < episodes[(2, 2)].sort_name


def test_music_artist_album_tracks(scanned) -> None:
    lib = scanned.extra["libraries"]["music"]
    artist = one(scanned, type="MusicArtist")
    assert artist.id == ids.by_name_id("MusicArtist", "Band") and artist.parent_id == lib
    albums = {a.name: a for a in items(scanned, type="MusicAlbum")}
    assert set(albums) == {"First Album", "Second Album"}
    first, second = albums["First Album"], albums["Second Album"]
    assert first.parent_id == artist.id and first.production_year == 2001
    assert json.loads(first.album_artists_json) == ["Band"]
    tracks = sorted(items(scanned, album_id=first.id), key=lambda t: (t.parent_index_number, t.index_number))
    assert [(t.parent_index_number, t.index_number) for t in tracks] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert all(t.type == "Audio" and t.parent_id == first.id and t.album == "First Album" for t in tracks)
    assert tracks[0].name == "Song 1.1" and tracks[0].container == "flac"
    assert [s["Type"] for s in streams(tracks[0])] == ["Audio", "EmbeddedImage"]
    cover = images(tracks[0])[0]
    assert cover["Type"] == "Primary" and os.path.isfile(cover["Path"])
    assert cover["Path"].startswith(str(scanned.ctx.paths.metadata_dir / "items" / tracks[0].id[:2] / tracks[0].id))
    assert os.path.basename(cover["Path"]).startswith("embedded-") and cover["BlurHash"]
    assert images(first)[0]["Path"] == cover["Path"]  # the album shows its first track's cover
    assert images(second)[0]["Path"].endswith("folder.jpg")
    tune2 = one(scanned, name="Tune 2")
    assert json.loads(tune2.artists_json) == ["Band", "Guest"] and tune2.production_year == 2005
    assert one(scanned, name="Tune 1").lyrics_path.endswith("01 - Tune 1.lrc")

    def read(s):
        return {(v.kind, v.value) for v in s.execute(select(ItemValue).where(ItemValue.item_id == tune2.id)).scalars()}

    assert {("Artist", "Band"), ("Artist", "Guest"), ("AlbumArtist", "Band"), ("Genre", "Pop")} <= \
        scanned.ctx.db.read_sync(read)


def test_counts(scanned) -> None:
    def count(library: str, kind: str) -> int:
        return len(items(scanned, library_id=scanned.extra["libraries"][library], type=kind))

    assert count("movies", "Movie") == 5  # Inception, Alien, Heat, Blade Runner + its second version
    assert count("shows", "Episode") == 5 and count("shows", "Season") == 3 and count("shows", "Series") == 1
    assert count("music", "Audio") == 7 and count("music", "MusicAlbum") == 2 and count("music", "MusicArtist") == 1
