"""What-is-this-file rules: real-world names in, what a user would see in the library out."""

from __future__ import annotations

import time
from datetime import date
from pathlib import Path

import pytest

from server.library.scan.naming import (
    ExtraType,
    FileKind,
    ImageType,
    InvalidMediaPathError,
    MediaType,
    VideoType,
    classify_extra,
    classify_sidecar_image,
    disc_type_from_entries,
    disc_type_of_folder,
    file_kind,
    is_extras_folder,
    language_code,
    media_type_for_path,
    parse_disc_folder,
    parse_episode,
    parse_movie_name,
    parse_season_folder,
    parse_series_folder,
    parse_subtitle_file,
    parse_track_filename,
    resolve_movie_folder,
    series_folder_of,
    stack_parts,
    subtitle_belongs_to,
    video_type_for_file,
)

# ----------------------------------------------------------------------------- movies

MOVIE_NAMES = [
    ("Title (2020).mkv", "Title", 2020),
    ("Title.2020.1080p.BluRay.x264.mkv", "Title", 2020),
    ("Title [2020].mkv", "Title", 2020),
    ("2001 A Space Odyssey (1968).mkv", "2001 A Space Odyssey", 1968),
    ("2001.A.Space.Odyssey.1968.1080p.BluRay.mkv", "2001 A Space Odyssey", 1968),
    ("Blade Runner 2049 (2017).mkv", "Blade Runner 2049", 2017),
    ("Blade.Runner.2049.2017.2160p.UHD.BluRay.x265-TERMiNAL.mkv", "Blade Runner 2049", 2017),
    ("Blade Runner 2049.mkv", "Blade Runner 2049", None),
    ("1917 (2019).mp4", "1917", 2019),
    ("300 (2006).mkv", "300", 2006),
    ("The Wolf of Wall Street 2001 (2013).mkv", "The Wolf of Wall Street 2001", 2013),
    ("3.Days.to.Kill.2014.720p.BluRay.x264.YIFY.mkv", "3 Days to Kill", 2014),
    ("Maximum Ride - 2016 - WEBDL-1080p - x264 AC3.mkv", "Maximum Ride", 2016),
    ("Drug War 2013.mp4", "Drug War", 2013),
    ("First Man 2018 1080p.mkv", "First Man", 2018),
    ("Robin Hood [Multi-Subs] [2018].mkv", "Robin Hood", 2018),
    ("Super movie(2009).mp4", "Super movie", 2009),
    ("Arrival.2016.2160p.Blu-Ray.HEVC.mkv", "Arrival", 2016),
    ("American.Psycho.mkv", "American Psycho", None),
    ("[rec].mkv", "[rec]", None),
    ("Last.Call.for.Nowhere.WEB-DL.1080p.mkv", "Last Call for Nowhere", None),
    ("Crouching.Tiger.Hidden.Dragon.4K.UltraHD.HDR.BDrip-HDC.mkv", "Crouching Tiger Hidden Dragon", None),
    ("Marvels.Agents.of.S.H.I.E.L.D.mkv", "Marvels Agents of S.H.I.E.L.D", None),
    ("Step Up 3D (2010).mkv", "Step Up 3D", 2010),
    ("Apocalypse.Now - Redux.mkv", "Apocalypse Now - Redux", None),
    ("2012.mkv", "2012", None),
    ("Movie (2020)-trailer.mkv", "Movie", 2020),
    ("[YTS] The Matrix (1999) [1080p].mp4", "The Matrix", 1999),
]


@pytest.mark.parametrize(("name", "title", "year"), MOVIE_NAMES)
def test_movie_title_and_year(name: str, title: str, year: int | None) -> None:
    parsed = parse_movie_name(f"/movies/{name}")
    assert (parsed.title, parsed.year) == (title, year)


@pytest.mark.parametrize(
    ("folder", "title", "year"),
    [
        ("St. Vincent (2014)", "St. Vincent", 2014),
        ("2012", "2012", None),
        ("1984", "1984", None),
        ("Alien (1979)", "Alien", 1979),
        ("The.Thing.1982.REMASTERED.1080p", "The Thing", 1982),
    ],
)
def test_movie_folder_names(folder: str, title: str, year: int | None) -> None:
    parsed = parse_movie_name(f"/movies/{folder}", is_directory=True)
    assert (parsed.title, parsed.year) == (title, year)


@pytest.mark.parametrize(
    ("name", "ids"),
    [
        ("Movie (2020) [tmdbid-123].mkv", {"Tmdb": "123"}),
        ("Movie (2020) [tmdbid=603].mkv", {"Tmdb": "603"}),
        ("Movie (2020) [imdbid-tt0012345].mkv", {"Imdb": "tt0012345"}),
        ("Movie (2020) {tmdb-123}.mkv", {"Tmdb": "123"}),
        ("Movie (2020) {imdb-tt0133093} [tmdbid-603].mkv", {"Imdb": "tt0133093", "Tmdb": "603"}),
        ("Movie (2020) [tvdbid-81189].mkv", {"Tvdb": "81189"}),
        ("Movie (2020) [tmdbid-abc].mkv", {}),
    ],
)
def test_provider_ids_in_names(name: str, ids: dict[str, str]) -> None:
    parsed = parse_movie_name(name)
    assert parsed.provider_ids == ids
    assert parsed.title == "Movie" or not ids


@pytest.mark.parametrize(
    ("name", "version"),
    [
        ("Movie (2020) - 1080p.mkv", "1080p"),
        ("Movie (2020) - Director's Cut.mkv", "Director's Cut"),
        ("Movie (2020) - Extended Edition [tmdbid-1].mkv", "Extended Edition"),
        ("Movie (2020).mkv", None),
    ],
)
def test_version_label_after_the_year(name: str, version: str | None) -> None:
    parsed = parse_movie_name(name)
    assert parsed.title == "Movie"
    assert parsed.year == 2020
    assert parsed.version_name == version


@pytest.mark.parametrize(
    ("name", "part"),
    [
        ("Movie (2020) cd1.avi", 1),
        ("Movie (2020) CD2.avi", 2),
        ("Movie-part1.mkv", 1),
        ("Movie.pt2.mkv", 2),
        ("Movie disc3.mkv", 3),
        ("Movie (2020)-dvd1.vob", 1),
        ("Movie [Part b].mkv", 2),
        ("Movie (2020).mkv", None),
    ],
)
def test_part_numbers(name: str, part: int | None) -> None:
    parsed = parse_movie_name(name)
    assert parsed.part == part
    assert parsed.title == "Movie"


def test_stacked_parts_become_one_movie_in_part_order() -> None:
    folder = "/movies/Movie (1999)/"
    result = resolve_movie_folder([folder + "Movie (1999) cd2.avi", folder + "Movie (1999) cd1.avi"])
    assert len(result.movies) == 1
    movie = result.movies[0]
    assert (movie.title, movie.year) == ("Movie", 1999)
    assert movie.primary.parts == (folder + "Movie (1999) cd1.avi", folder + "Movie (1999) cd2.avi")


def test_stacking_needs_same_title_and_extension() -> None:
    stacks, rest = stack_parts(["/m/A part1.mkv", "/m/A part2.avi", "/m/B part1.mkv", "/m/B part2.mkv"])
    assert [s.name for s in stacks] == ["B"]
    assert sorted(rest) == ["/m/A part1.mkv", "/m/A part2.avi"]


def test_multi_version_folder_is_one_movie_with_named_versions() -> None:
    folder = "/movies/Movie (2020)/"
    files = [
        folder + "Movie (2020) - 1080p.mkv",
        folder + "Movie (2020) - Director's Cut.mkv",
        folder + "Movie (2020) - 2160p.mkv",
    ]
    result = resolve_movie_folder(files)
    assert len(result.movies) == 1
    movie = result.movies[0]
    assert (movie.title, movie.year) == ("Movie", 2020)
    assert [v.name for v in movie.versions] == ["2160p", "1080p", "Director's Cut"]


def test_file_named_like_folder_is_the_primary_version() -> None:
    folder = "/movies/Blade Runner (1982)/"
    files = [
        folder + "Blade Runner (1982) [Final Cut] [1080p HEVC AAC].mkv",
        folder + "Blade Runner (1982).mkv",
    ]
    movie = resolve_movie_folder(files).movies[0]
    assert movie.primary.parts == (folder + "Blade Runner (1982).mkv",)
    assert movie.primary.name is None
    assert movie.versions[1].name == "[Final Cut] [1080p HEVC AAC]"


def test_different_years_in_one_folder_are_different_movies() -> None:
    folder = "/movies/Iron Man/"
    result = resolve_movie_folder([folder + "Iron Man (2008).mkv", folder + "Iron Man (2010).mkv"])
    assert [(m.title, m.year) for m in result.movies] == [("Iron Man", 2008), ("Iron Man", 2010)]


def test_extras_attach_to_the_single_movie_of_a_folder() -> None:
    folder = "/movies/Movie (2020)/"
    files = [
        folder + "Movie (2020).mkv",
        folder + "Movie (2020)-trailer.mkv",
        folder + "trailers/Teaser.mkv",
        folder + "behind the scenes/Making of.mkv",
        folder + "theme.mp3",
        folder + "backdrops/loop.mp4",
        folder + "poster.jpg",
    ]
    result = resolve_movie_folder(files)
    assert len(result.movies) == 1
    extras = {Path(e.path).name: e.extra_type for e in result.movies[0].extras}
    assert extras == {
        "Movie (2020)-trailer.mkv": ExtraType.TRAILER,
        "Teaser.mkv": ExtraType.TRAILER,
        "Making of.mkv": ExtraType.BEHIND_THE_SCENES,
        "theme.mp3": ExtraType.THEME_SONG,
        "loop.mp4": ExtraType.THEME_VIDEO,
    }
    assert result.movies[0].versions[0].parts == (folder + "Movie (2020).mkv",)


def test_extras_in_a_mixed_folder_go_to_the_movie_they_are_named_after() -> None:
    files = [
        "/movies/A (2001).mkv",
        "/movies/B (2002).mkv",
        "/movies/B (2002)-featurette.mkv",
        "/movies/trailer.mkv",
    ]
    result = resolve_movie_folder(files)
    by_title = {m.title: m for m in result.movies}
    assert [e.extra_type for e in by_title["B"].extras] == [ExtraType.FEATURETTE]
    assert by_title["A"].extras == ()
    assert [Path(e.path).name for e in result.unmatched_extras] == ["trailer.mkv"]


@pytest.mark.parametrize(
    ("path", "extra_type"),
    [
        ("/m/Movie/extras/anything.mkv", ExtraType.UNKNOWN),
        ("/m/Movie/Behind The Scenes/x.mkv", ExtraType.BEHIND_THE_SCENES),
        ("/m/Movie/deleted scenes/x.mkv", ExtraType.DELETED_SCENE),
        ("/m/Movie/featurettes/x.mkv", ExtraType.FEATURETTE),
        ("/m/Movie/interviews/x.mkv", ExtraType.INTERVIEW),
        ("/m/Movie/scenes/x.mkv", ExtraType.SCENE),
        ("/m/Movie/shorts/x.mkv", ExtraType.SHORT),
        ("/m/Movie/trailers/x.mkv", ExtraType.TRAILER),
        ("/m/Movie/samples/x.mkv", ExtraType.SAMPLE),
        ("/m/Movie/other/x.mkv", ExtraType.UNKNOWN),
        ("/m/Movie/clips/x.mkv", ExtraType.CLIP),
        ("/m/Movie/backdrops/x.mkv", ExtraType.THEME_VIDEO),
        ("/m/Movie/theme-music/x.mp3", ExtraType.THEME_SONG),
        ("/m/Movie/theme.mp3", ExtraType.THEME_SONG),
        ("/m/Movie/trailer.mkv", ExtraType.TRAILER),
        ("/m/Movie/sample.mkv", ExtraType.SAMPLE),
        ("/m/Movie/Movie-trailer.mkv", ExtraType.TRAILER),
        ("/m/Movie/Movie-trailer2.mkv", ExtraType.TRAILER),
        ("/m/Movie/Movie.trailer.mp4", ExtraType.TRAILER),
        ("/m/Movie/Movie-sample.mkv", ExtraType.SAMPLE),
        ("/m/Movie/Movie-featurette.mkv", ExtraType.FEATURETTE),
        ("/m/Movie/Movie-deleted.mkv", ExtraType.DELETED_SCENE),
        ("/m/Movie/Movie-behindthescenes.mkv", ExtraType.BEHIND_THE_SCENES),
        ("/m/Movie/Movie-interview.mkv", ExtraType.INTERVIEW),
        ("/m/Movie/Movie-short.mkv", ExtraType.SHORT),
        ("/m/Movie/Movie-clip.mkv", ExtraType.CLIP),
        ("/m/Movie/Movie-other.mkv", ExtraType.UNKNOWN),
        ("/m/Movie/Movie.mkv", None),
        ("/m/Movie/theme-music/poster.jpg", None),
        ("/m/Movie/trailers/notes.txt", None),
        ("/m/Trailer Park Boys/Trailer Park Boys S01E01.mkv", None),
    ],
)
def test_extra_types(path: str, extra_type: ExtraType | None) -> None:
    assert classify_extra(path) == extra_type


def test_extras_folder_names() -> None:
    assert is_extras_folder("Behind The Scenes")
    assert is_extras_folder("theme-music")
    assert not is_extras_folder("Season 1")


def test_disc_folders_are_recognised(tmp_path: Path) -> None:
    dvd = tmp_path / "Old Movie (1985)"
    (dvd / "VIDEO_TS").mkdir(parents=True)
    (dvd / "VIDEO_TS" / "VIDEO_TS.IFO").write_bytes(b"\0")
    bluray = tmp_path / "New Movie (2015)"
    (bluray / "BDMV" / "STREAM").mkdir(parents=True)
    plain = tmp_path / "Plain (2000)"
    plain.mkdir()
    assert disc_type_of_folder(dvd) == VideoType.DVD
    assert disc_type_of_folder(dvd / "VIDEO_TS") == VideoType.DVD
    assert disc_type_of_folder(bluray) == VideoType.BLU_RAY
    assert disc_type_of_folder(plain) is None
    assert disc_type_of_folder(tmp_path / "missing") is None
    assert parse_movie_name(dvd, is_directory=True).title == "Old Movie"


def test_disc_types_from_listings_and_files() -> None:
    assert disc_type_from_entries(["VIDEO_TS", "AUDIO_TS"]) == VideoType.DVD
    assert disc_type_from_entries(["BDMV", "CERTIFICATE"]) == VideoType.BLU_RAY
    assert disc_type_from_entries(["movie.mkv"]) is None
    assert video_type_for_file("/m/Movie.iso") == VideoType.ISO
    assert video_type_for_file("/m/Movie.mkv") == VideoType.VIDEO_FILE


# ----------------------------------------------------------------------------- series

EPISODES = [
    # path, series, season, episode, episode_end, title
    ("/tv/Series Name/Series.Name.S01E01.720p.WEB-DL.mkv", "Series Name", 1, 1, None, None),
    ("/tv/Show/Season 2/Show - 2x05 - Title.mkv", "Show", 2, 5, None, "Title"),
    ("/tv/Show/Season 1/s1e2.mkv", "Show", 1, 2, None, None),
    ("/tv/Show/Season 1/Show S01E02-E03 - Double Trouble.mkv", "Show", 1, 2, 3, "Double Trouble"),
    ("/tv/Show/Season 1/Show.S01E02E03.mkv", "Show", 1, 2, 3, None),
    ("/tv/Show/Season 1/Show - S01E02-03.mkv", "Show", 1, 2, 3, None),
    ("/tv/Show/Season 1/Elementary - S01E23-E24-E26 - The Woman.mp4", "Elementary", 1, 23, 26, "The Woman"),
    ("/tv/Show/Season 2/Elementary - 02x03-04-15 - Ep Name.mp4", "Elementary", 2, 3, 15, "Ep Name"),
    ("/tv/Show/Season 2/Elementary - 02x03 - 02x04 - 02x15 - Ep Name.mp4", "Elementary", 2, 3, 15, "Ep Name"),
    ("/tv/Show/Season 2/Elementary - 02x03x04x15 - Ep Name.mp4", "Elementary", 2, 3, 15, "Ep Name"),
    ("/tv/Show/Season 9/series-s09e14-1080p.mkv", "series", 9, 14, None, None),
    (
        "/tv/The Simpsons/Season 25/The Simpsons.S25E09.Steal this episode.mp4",
        "The Simpsons",
        25,
        9,
        None,
        "Steal this episode",
    ),
    ("/tv/Running Man/Running Man S2017E368.mkv", "Running Man", 2017, 368, None, None),
    ("/tv/Show/Season 1/Show - S01E02 - Pilot Part 2 [1080p].mkv", "Show", 1, 2, None, "Pilot Part 2"),
    ("/tv/Show/Season 1/Show.S01E02.The.Title.720p.HDTV.x264-GRP.mkv", "Show", 1, 2, None, "The Title"),
    ("/tv/Show/Season 3/Show S03 E09.avi", "Show", 3, 9, None, None),
    ("/tv/Show/Show Season 1 Episode 2 - Title.avi", "Show", 1, 2, None, "Title"),
    ("/tv/Show/Season 2/Episode 16 - Some Title.avi", "Show", 2, 16, None, "Some Title"),
    ("/tv/Show/Season 2/7 - 12 Angry Men.avi", "Show", 2, 7, None, "12 Angry Men"),
    ("/tv/Show/Season 2/2. Infestation.avi", "Show", 2, 2, None, "Infestation"),
    ("/tv/Show/Season 2/02.avi", "Show", 2, 2, None, None),
    ("/tv/Show/Season 1/01-03.avi", "Show", 1, 1, 3, None),
    ("/tv/Series/Series - 102.mkv", "Series", 1, 2, None, None),
    ("/tv/Show/Season 1/Show - 102 - Title.mkv", "Show", 1, 2, None, "Title"),
    ("/tv/Show/Season 2/Show - 136.mkv", "Show", 2, 136, None, None),
    ("/tv/Show/Show - 012.mkv", "Show", None, 12, None, None),
    ("/tv/Anime/[HorribleSubs] Made in Abyss - 13 [720p].mkv", "Made in Abyss", None, 13, None, None),
    ("/tv/Anime/Season 2/[Group] Hunter X Hunter - 136 [1080p].mkv", "Hunter X Hunter", 2, 136, None, None),
    ("/tv/Running Man/Running Man 368.mkv", "Running Man", None, 368, None, None),
    ("/tv/Show/show.102.hdtv.avi", "show", 1, 2, None, None),
    ("/tv/Show/Season 4/Uchuu.Senkan.Yamato.2199.S04E03.avi", "Uchuu Senkan Yamato 2199", 4, 3, None, None),
    ("/tv/Show/Specials/Show S00E01 - Pilot.mkv", "Show", 0, 1, None, "Pilot"),
    ("/tv/Show/Specials/01 - Unaired Pilot.mkv", "Show", 0, 1, None, "Unaired Pilot"),
    ("/tv/Show/Season 0/Show S00E05.mkv", "Show", 0, 5, None, None),
    (
        "/tv/The Wonder Years/The.Wonder.Years.S04.PDTV.x264-JCH/The Wonder Years s04e07 Christmas Party NTSC PDTV.avi",
        "The Wonder Years",
        4,
        7,
        None,
        "Christmas Party",
    ),
    ("/tv/Show (2019)/Season 1/Show (2019) S01E01.mkv", "Show", 1, 1, None, None),
    ("/tv/Doctor Who (2005)/Doctor.Who.2005.S01E01.Rose.720p.mkv", "Doctor Who", 1, 1, None, "Rose"),
    ("/tv/The 4400/The.4400.S01E01.mkv", "The 4400", 1, 1, None, None),
]


@pytest.mark.parametrize(("path", "series", "season", "episode", "end", "title"), EPISODES)
def test_episodes(
    path: str, series: str, season: int | None, episode: int, end: int | None, title: str | None
) -> None:
    info = parse_episode(path)
    assert (info.series_name, info.season, info.episode, info.episode_end, info.title) == (
        series,
        season,
        episode,
        end,
        title,
    )
    assert info.is_special == (season == 0)


@pytest.mark.parametrize(
    ("path", "aired", "series", "title"),
    [
        ("/tv/Show/Show 2020-01-31.mkv", date(2020, 1, 31), "Show", None),
        ("/tv/Show/Show.2020.01.31.Guest.Name.720p.mkv", date(2020, 1, 31), "Show", "Guest Name"),
        ("/tv/Daily/Daily Show 31.12.2019.mkv", date(2019, 12, 31), "Daily Show", None),
        ("/tv/Daily/2019_04_20 - Anne Hathaway.mkv", date(2019, 4, 20), "Daily", "Anne Hathaway"),
    ],
)
def test_date_based_episodes(path: str, aired: date, series: str, title: str | None) -> None:
    info = parse_episode(path)
    assert info.date == aired
    assert info.episode is None
    assert (info.series_name, info.title) == (series, title)


def test_resolution_is_not_read_as_season_and_episode() -> None:
    info = parse_episode("/tv/Series Special (1920x1080).mkv")
    assert info.episode is None


def test_file_without_numbers_keeps_folder_season_and_series() -> None:
    info = parse_episode("/tv/The Office (US)/Season 3/Behind the office.mkv")
    assert (info.series_name, info.season, info.episode) == ("The Office (US)", 3, None)


@pytest.mark.parametrize(
    ("name", "season"),
    [
        ("Season 1", 1),
        ("Season 01", 1),
        ("season 10", 10),
        ("S01", 1),
        ("s3", 3),
        ("Specials", 0),
        ("Season 0", 0),
        ("Season 00", 0),
        ("Staffel 3", 3),
        ("Saison 2", 2),
        ("Temporada 4", 4),
        ("Stagione 5", 5),
        ("Series 2", 2),
        ("Season 2 (2019)", 2),
        ("Season 2019", 2019),
        ("Show S02", 2),
        ("Extras", None),
        ("The Show", None),
        ("Seasons of Love", None),
        ("1", None),
    ],
)
def test_season_folders(name: str, season: int | None) -> None:
    assert parse_season_folder(f"/tv/Show/{name}") == season


def test_numeric_season_folders_are_optional() -> None:
    assert parse_season_folder("/tv/Show/3", numeric_folders=True) == 3


@pytest.mark.parametrize(
    ("name", "title", "year", "ids"),
    [
        ("The Office (US)", "The Office (US)", None, {}),
        ("Show (2019)", "Show", 2019, {}),
        ("1923 (2022)", "1923", 2022, {}),
        ("Doctor Who (2005) [tvdbid-78804]", "Doctor Who", 2005, {"Tvdb": "78804"}),
        ("Doctor Who (2005) {tmdb-57243}", "Doctor Who", 2005, {"Tmdb": "57243"}),
        ("The.Expanse", "The Expanse", None, {}),
        ("S.W.A.T. (2017)", "S.W.A.T.", 2017, {}),
        ("2020", "2020", None, {}),
    ],
)
def test_series_folders(name: str, title: str, year: int | None, ids: dict[str, str]) -> None:
    series = parse_series_folder(f"/tv/{name}")
    assert (series.title, series.year, series.provider_ids) == (title, year, ids)


def test_series_folder_of_an_episode() -> None:
    assert series_folder_of("/tv/Show/Season 1/e.mkv").name == "Show"
    assert series_folder_of("/tv/Show/e.mkv").name == "Show"


# ----------------------------------------------------------------------------- music


@pytest.mark.parametrize(
    ("path", "disc", "track", "title", "artist"),
    [
        ("/music/Artist/Album/01 - Title.mp3", None, 1, "Title", None),
        ("/music/Artist/Album/01. Title.mp3", None, 1, "Title", None),
        ("/music/Artist/Album/07 Title Words.flac", None, 7, "Title Words", None),
        ("/music/Artist/Album/1-03 Title.flac", 1, 3, "Title", None),
        ("/music/Artist/Album/2-11 - Title.flac", 2, 11, "Title", None),
        ("/music/Artist/Album/CD1/05 - Title.mp3", 1, 5, "Title", None),
        ("/music/Artist/Album/Disc 2/05 - Title.mp3", 2, 5, "Title", None),
        ("/music/Artist/Album/Artist Name - 04 - Title.ogg", None, 4, "Title", "Artist Name"),
        ("/music/Artist/Album/12_Track_Name.mp3", None, 12, "Track Name", None),
        ("/music/Artist/Album/Just A Title.mp3", None, None, "Just A Title", None),
        ("/music/Prince/1999 - Prince.mp3", None, None, "1999 - Prince", None),
    ],
)
def test_track_names(path: str, disc: int | None, track: int | None, title: str, artist: str | None) -> None:
    parsed = parse_track_filename(path)
    assert (parsed.disc, parsed.track, parsed.title, parsed.artist) == (disc, track, title, artist)


@pytest.mark.parametrize(
    ("name", "disc"),
    [
        ("Disc 1", 1),
        ("CD 2", 2),
        ("CD2", 2),
        ("cd-3", 3),
        ("Disk.4", 4),
        ("Vol. 1", 1),
        ("Volume 2", 2),
        ("Disc 1 - The Early Years", 1),
        ("Discography", None),
        ("Album (2001)", None),
    ],
)
def test_disc_folders(name: str, disc: int | None) -> None:
    assert parse_disc_folder(f"/music/Artist/Album/{name}") == disc


# ----------------------------------------------------------------------------- kinds of files


@pytest.mark.parametrize(
    ("name", "media_type", "kind"),
    [
        ("movie.mkv", MediaType.VIDEO, FileKind.VIDEO),
        ("MOVIE.MP4", MediaType.VIDEO, FileKind.VIDEO),
        ("clip.webm", MediaType.VIDEO, FileKind.VIDEO),
        ("song.mp3", MediaType.AUDIO, FileKind.AUDIO),
        ("song.FLAC", MediaType.AUDIO, FileKind.AUDIO),
        ("book.m4b", MediaType.AUDIO, FileKind.AUDIO),
        ("photo.jpg", MediaType.PHOTO, FileKind.PHOTO),
        ("photo.heic", MediaType.PHOTO, FileKind.PHOTO),
        ("novel.epub", MediaType.BOOK, FileKind.BOOK),
        ("paper.pdf", MediaType.BOOK, FileKind.BOOK),
        ("novel.mobi", MediaType.BOOK, FileKind.BOOK),
        ("comic.cbz", MediaType.BOOK, FileKind.BOOK),
        ("comic.cbr", MediaType.BOOK, FileKind.BOOK),
        ("kindle.azw3", MediaType.BOOK, FileKind.BOOK),
        ("subs.srt", MediaType.UNKNOWN, FileKind.SUBTITLE),
        ("subs.ass", MediaType.UNKNOWN, FileKind.SUBTITLE),
        ("subs.ssa", MediaType.UNKNOWN, FileKind.SUBTITLE),
        ("subs.vtt", MediaType.UNKNOWN, FileKind.SUBTITLE),
        ("subs.sub", MediaType.UNKNOWN, FileKind.SUBTITLE),
        ("subs.smi", MediaType.UNKNOWN, FileKind.SUBTITLE),
        ("movie.nfo", MediaType.UNKNOWN, FileKind.NFO),
        ("notes.txt", MediaType.UNKNOWN, FileKind.OTHER),
        ("no_extension", MediaType.UNKNOWN, FileKind.OTHER),
    ],
)
def test_media_type_by_extension(name: str, media_type: MediaType, kind: FileKind) -> None:
    assert media_type_for_path(f"/lib/{name}") == media_type
    assert file_kind(f"/lib/{name}") == kind


def test_ogg_depends_on_the_library() -> None:
    assert media_type_for_path("/lib/track.ogg", "music") == MediaType.AUDIO
    assert media_type_for_path("/lib/clip.ogg", "movies") == MediaType.VIDEO


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b.mkv", 42, None, b"/bytes/path.mkv"])
def test_bad_paths_raise_a_typed_error(bad: object) -> None:
    with pytest.raises(InvalidMediaPathError):
        parse_movie_name(bad)  # type: ignore[arg-type]
    assert issubclass(InvalidMediaPathError, ValueError)


@pytest.mark.parametrize(
    ("name", "stem", "image_type", "index", "season"),
    [
        ("poster.jpg", None, ImageType.PRIMARY, 0, None),
        ("folder.jpg", None, ImageType.PRIMARY, 0, None),
        ("cover.png", None, ImageType.PRIMARY, 0, None),
        ("fanart.jpg", None, ImageType.BACKDROP, 0, None),
        ("fanart-2.jpg", None, ImageType.BACKDROP, 2, None),
        ("backdrop3.jpg", None, ImageType.BACKDROP, 3, None),
        ("banner.jpg", None, ImageType.BANNER, 0, None),
        ("logo.png", None, ImageType.LOGO, 0, None),
        ("clearlogo.png", None, ImageType.LOGO, 0, None),
        ("thumb.jpg", None, ImageType.THUMB, 0, None),
        ("landscape.jpg", None, ImageType.THUMB, 0, None),
        ("clearart.png", None, ImageType.ART, 0, None),
        ("disc.png", None, ImageType.DISC, 0, None),
        ("Movie (2020)-poster.jpg", "Movie (2020)", ImageType.PRIMARY, 0, None),
        ("Movie (2020)-fanart.jpg", "Movie (2020)", ImageType.BACKDROP, 0, None),
        ("Movie (2020)-landscape.jpg", "Movie (2020)", ImageType.THUMB, 0, None),
        ("Movie (2020).jpg", "Movie (2020)", ImageType.PRIMARY, 0, None),
        ("season01-poster.jpg", None, ImageType.PRIMARY, 0, 1),
        ("season-specials-poster.jpg", None, ImageType.PRIMARY, 0, 0),
        ("season02-fanart.jpg", None, ImageType.BACKDROP, 0, 2),
    ],
)
def test_sidecar_images(
    name: str, stem: str | None, image_type: ImageType, index: int, season: int | None
) -> None:
    image = classify_sidecar_image(f"/movies/Movie (2020)/{name}", stem)
    assert image is not None
    assert (image.image_type, image.index, image.season) == (image_type, index, season)


def test_non_artwork_images_and_episode_thumbs() -> None:
    assert classify_sidecar_image("/movies/Movie/holiday.jpg") is None
    assert classify_sidecar_image("/movies/Movie/poster.txt") is None
    thumb = classify_sidecar_image("/tv/Show/Season 1/Show S01E01-thumb.jpg", "Show S01E01", episode=True)
    assert thumb is not None and thumb.image_type == ImageType.PRIMARY


# ----------------------------------------------------------------------------- subtitles


@pytest.mark.parametrize(
    ("name", "language", "forced", "default", "hearing_impaired", "title"),
    [
        ("Movie.srt", None, False, False, False, None),
        ("Movie.en.srt", "eng", False, False, False, None),
        ("Movie.eng.srt", "eng", False, False, False, None),
        ("Movie.English.srt", "eng", False, False, False, None),
        ("Movie.de.srt", "ger", False, False, False, None),
        ("Movie.deu.srt", "ger", False, False, False, None),
        ("Movie.fr.ass", "fre", False, False, False, None),
        ("Movie.pt-BR.srt", "por", False, False, False, None),
        ("Movie.eng.forced.srt", "eng", True, False, False, None),
        ("Movie.en.foreign.srt", "eng", True, False, False, None),
        ("Movie.en.sdh.srt", "eng", False, False, True, None),
        ("Movie.en.cc.srt", "eng", False, False, True, None),
        ("Movie.en.hi.srt", "eng", False, False, True, None),
        ("Movie.hi.srt", "hin", False, False, False, None),
        ("Movie.default.srt", None, False, True, False, None),
        ("Movie.en.default.forced.srt", "eng", True, True, False, None),
        ("Movie.en.Commentary.srt", "eng", False, False, False, "Commentary"),
    ],
)
def test_subtitle_sidecars(
    name: str, language: str | None, forced: bool, default: bool, hearing_impaired: bool, title: str | None
) -> None:
    sub = parse_subtitle_file(f"/movies/Movie/{name}", "Movie")
    assert sub is not None
    assert (sub.language, sub.is_forced, sub.is_default, sub.is_hearing_impaired, sub.title) == (
        language,
        forced,
        default,
        hearing_impaired,
        title,
    )
    assert sub.codec == Path(name).suffix.lstrip(".")


def test_subtitle_flags_without_the_video_name() -> None:
    sub = parse_subtitle_file("/movies/The.Movie.2020.1080p.en.forced.srt")
    assert sub is not None and (sub.language, sub.is_forced) == ("eng", True)


def test_subtitles_belong_to_the_video_they_are_named_after() -> None:
    assert subtitle_belongs_to("/m/Movie (2020).en.srt", "/m/Movie (2020).mkv")
    assert subtitle_belongs_to("/m/Movie (2020).srt", "/m/Movie (2020).mkv")
    assert not subtitle_belongs_to("/m/Movie (2020) Part 2.srt", "/m/Movie (2020).mkv")
    assert not subtitle_belongs_to("/m/Movie (2020).en.txt", "/m/Movie (2020).mkv")
    assert parse_subtitle_file("/m/Other.en.srt", "Movie (2020)") is None
    assert parse_subtitle_file("/m/Movie.mkv", "Movie") is None


def test_language_codes() -> None:
    assert language_code("ja") == "jpn"
    assert language_code("zho") == "chi"
    assert language_code("Greek") == "gre"
    assert language_code("klingon") is None


@pytest.mark.parametrize(
    "unit", [".", "a.", "a - ", "S01E01-E02", "1x02x", "[a]", "(2020) ", " - 1", "2020."]
)
def test_hostile_names_stay_fast(unit: str) -> None:
    name = (unit * 1000)[:1000]
    started = time.monotonic()
    parse_movie_name(f"/m/{name}.mkv")
    parse_episode(f"/tv/{name}/{name}.mkv")
    resolve_movie_folder([f"/m/{name}.mkv", f"/m/{name} cd1.mkv"])
    # only catches catastrophic backtracking (hours at 1,000 characters), never a slow machine
    assert time.monotonic() - started < 30


def test_impossibly_long_names_are_refused() -> None:
    with pytest.raises(InvalidMediaPathError):
        parse_episode("/tv/" + "a" * 2000 + ".mkv")
