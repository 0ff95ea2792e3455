"""Kodi NFO files written to tmp_path: what they say, which one belongs to an item, and the
files that must be refused (entity expansion, external entities) or ignored (malformed)."""

from __future__ import annotations

from datetime import date
from pathlib import Path, PurePath

import pytest

from server.library.scan.naming import VideoType
from server.library.scan.nfo import (
    MAX_NFO_BYTES,
    NfoPerson,
    UnsafeNfoError,
    find_nfo,
    nfo_candidates,
    parse_nfo,
    parse_nfo_bytes,
    parse_xml_safely,
)

MOVIE_NFO = """<?xml version="1.0" encoding="UTF-8" standalone="yes" ?>
<movie>
    <title>The Matrix</title>
    <originaltitle>The Matrix</originaltitle>
    <sorttitle>Matrix 1</sorttitle>
    <ratings>
        <rating name="imdb" max="10" default="true"><value>8.7</value><votes>1,900,000</votes></rating>
        <rating name="tomatometerallcritics" max="100"><value>83</value></rating>
    </ratings>
    <criticrating>83</criticrating>
    <plot>A hacker learns the truth about his reality.</plot>
    <tagline>Welcome to the Real World.</tagline>
    <runtime>136</runtime>
    <mpaa>Rated R</mpaa>
    <uniqueid type="imdb" default="true">tt0133093</uniqueid>
    <uniqueid type="tmdb">603</uniqueid>
    <genre>Action</genre>
    <genre>Science Fiction / Thriller</genre>
    <country>United States of America</country>
    <set><name>The Matrix Collection</name><overview/></set>
    <tag>cyberpunk</tag>
    <tag>simulation</tag>
    <credits>Lilly Wachowski</credits>
    <credits>Lana Wachowski</credits>
    <director>Lana Wachowski / Lilly Wachowski</director>
    <premiered>1999-03-31</premiered>
    <year>1999</year>
    <studio>Warner Bros. Pictures</studio>
    <studio>Village Roadshow Pictures</studio>
    <actor>
        <name>Keanu Reeves</name>
        <role>Neo</role>
        <order>0</order>
        <thumb>https://image.example/keanu.jpg</thumb>
    </actor>
    <actor>
        <name>Carrie-Anne Moss</name>
        <role>Trinity</role>
        <order>2</order>
    </actor>
    <lockdata>true</lockdata>
    <fileinfo><streamdetails><video><codec>h264</codec></video></streamdetails></fileinfo>
</movie>
"""


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_movie_nfo(tmp_path: Path) -> None:
    nfo = parse_nfo(write(tmp_path, "movie.nfo", MOVIE_NFO))
    assert nfo is not None
    assert nfo.kind == "movie"
    assert (nfo.title, nfo.original_title, nfo.sort_title) == ("The Matrix", "The Matrix", "Matrix 1")
    assert nfo.overview == "A hacker learns the truth about his reality."
    assert nfo.tagline == "Welcome to the Real World."
    assert (nfo.year, nfo.premiere_date) == (1999, date(1999, 3, 31))
    assert nfo.community_rating == 8.7
    assert nfo.critic_rating == 83
    assert [(r.source, r.value, r.votes, r.is_default) for r in nfo.ratings] == [
        ("imdb", 8.7, 1900000, True),
        ("tomatometerallcritics", 83.0, None, False),
    ]
    assert nfo.official_rating == "R"
    assert nfo.genres == ("Action", "Science Fiction", "Thriller")
    assert nfo.studios == ("Warner Bros. Pictures", "Village Roadshow Pictures")
    assert nfo.tags == ("cyberpunk", "simulation")
    assert nfo.countries == ("United States of America",)
    assert nfo.provider_ids == {"Imdb": "tt0133093", "Tmdb": "603"}
    assert nfo.collection_name == "The Matrix Collection"
    assert nfo.runtime_minutes == 136
    assert nfo.lock_data is True
    actors = [p for p in nfo.people if p.kind == "Actor"]
    assert actors[0] == NfoPerson("Keanu Reeves", "Actor", "Neo", 0, "https://image.example/keanu.jpg")
    assert actors[1].role == "Trinity" and actors[1].order == 2
    assert [p.name for p in nfo.people if p.kind == "Director"] == ["Lana Wachowski", "Lilly Wachowski"]
    assert [p.name for p in nfo.people if p.kind == "Writer"] == ["Lilly Wachowski", "Lana Wachowski"]


def test_tvshow_nfo_with_legacy_id_tags(tmp_path: Path) -> None:
    text = """<tvshow>
        <title>The Office</title>
        <showtitle>The Office</showtitle>
        <rating>8.9</rating>
        <plot>A mockumentary.</plot>
        <mpaa>TV-14</mpaa>
        <id>73244</id>
        <imdb_id>tt0386676</imdb_id>
        <tmdbid>2316</tmdbid>
        <premiered>2005-03-24</premiered>
        <enddate>2013-05-16</enddate>
        <status>Ended</status>
        <studio>NBC</studio>
        <genre>Comedy</genre>
    </tvshow>"""
    nfo = parse_nfo(write(tmp_path, "The Office (US)/tvshow.nfo", text))
    assert nfo is not None and nfo.kind == "tvshow"
    assert nfo.provider_ids == {"Imdb": "tt0386676", "Tmdb": "2316", "Tvdb": "73244"}
    assert (nfo.premiere_date, nfo.end_date, nfo.year) == (date(2005, 3, 24), date(2013, 5, 16), 2005)
    assert (nfo.status, nfo.official_rating, nfo.community_rating) == ("Ended", "TV-14", 8.9)


def test_episode_nfo(tmp_path: Path) -> None:
    text = """<?xml version="1.0" encoding="utf-8"?>
    <episodedetails>
        <title>Pilot</title>
        <showtitle>Show</showtitle>
        <season>1</season>
        <episode>1</episode>
        <aired>2010-09-01</aired>
        <uniqueid type="tvdb" default="true">12345</uniqueid>
        <actor><name>Guest</name><role>Visitor</role><type>GuestStar</type></actor>
        <director>Someone</director>
    </episodedetails>"""
    nfo = parse_nfo(write(tmp_path, "Show S01E01.nfo", text))
    assert nfo is not None
    assert (nfo.kind, nfo.title, nfo.series_name) == ("episodedetails", "Pilot", "Show")
    assert (nfo.season_number, nfo.episode_number, nfo.episode_number_end) == (1, 1, None)
    assert nfo.premiere_date == date(2010, 9, 1)
    assert nfo.provider_ids == {"Tvdb": "12345"}
    assert nfo.people[0] == NfoPerson("Guest", "GuestStar", "Visitor")


def test_multi_episode_nfo_gives_the_last_episode_number(tmp_path: Path) -> None:
    text = """<episodedetails><title>Part One</title><season>2</season><episode>3</episode></episodedetails>
<episodedetails><title>Part Two</title><season>2</season><episode>4</episode></episodedetails>
"""
    nfo = parse_nfo(write(tmp_path, "Show S02E03-E04.nfo", text))
    assert nfo is not None
    assert (nfo.season_number, nfo.episode_number, nfo.episode_number_end) == (2, 3, 4)
    assert nfo.title == "Part One / Part Two"


def test_musicvideo_album_and_artist_nfos(tmp_path: Path) -> None:
    video = parse_nfo(
        write(
            tmp_path,
            "v.nfo",
            "<musicvideo><title>Song</title><artist>Band</artist><album>LP</album><year>2001</year></musicvideo>",
        )
    )
    assert video is not None
    assert (video.kind, video.title, video.artists, video.album, video.year) == (
        "musicvideo",
        "Song",
        ("Band",),
        "LP",
        2001,
    )

    album = parse_nfo(
        write(
            tmp_path,
            "album.nfo",
            """<album><title>LP</title><artist>Band</artist><albumartist>Band</albumartist>
            <genre>Rock</genre><releasedate>2001-05-01</releasedate><review>Great.</review>
            <musicbrainzalbumid>0b4f0a4e-0000-0000-0000-000000000000</musicbrainzalbumid></album>""",
        )
    )
    assert album is not None
    assert (album.kind, album.title, album.album_artists, album.overview) == (
        "album",
        "LP",
        ("Band",),
        "Great.",
    )
    assert album.premiere_date == date(2001, 5, 1)
    assert album.provider_ids == {"MusicBrainzAlbum": "0b4f0a4e-0000-0000-0000-000000000000"}

    artist = parse_nfo(
        write(
            tmp_path,
            "artist.nfo",
            """<artist><name>Band</name><biography>Formed in a garage.</biography><formed>1990-01-01</formed>
            <album><title>LP</title><year>2001</year></album>
            <musicBrainzArtistID>a74b1b7f-0000-0000-0000-000000000000</musicBrainzArtistID></artist>""",
        )
    )
    assert artist is not None
    assert (artist.kind, artist.title, artist.overview) == ("artist", "Band", "Formed in a garage.")
    assert artist.premiere_date == date(1990, 1, 1)
    assert artist.provider_ids == {"MusicBrainzArtist": "a74b1b7f-0000-0000-0000-000000000000"}


def test_url_after_the_xml_and_url_only_nfos(tmp_path: Path) -> None:
    text = "<movie><title>Heat</title></movie>\nhttps://www.imdb.com/title/tt0113277/\n"
    nfo = parse_nfo(write(tmp_path, "Heat (1995).nfo", text))
    assert nfo is not None and nfo.title == "Heat"
    assert nfo.provider_ids == {"Imdb": "tt0113277"}

    url_only = parse_nfo(write(tmp_path, "Other.nfo", "https://www.themoviedb.org/movie/949-heat\n"))
    assert url_only is not None
    assert url_only.provider_ids == {"Tmdb": "949"}


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<movie><title>&lol9;</title></movie>
"""


def test_entity_expansion_is_refused_not_expanded(tmp_path: Path) -> None:
    # refused, not expanded (an expansion would take minutes and gigabytes, not fail a bound)
    assert parse_nfo(write(tmp_path, "bomb.nfo", BILLION_LAUGHS)) is None
    with pytest.raises(UnsafeNfoError):
        parse_xml_safely(BILLION_LAUGHS.encode())


def test_external_entities_are_refused(tmp_path: Path) -> None:
    secret = write(tmp_path, "secret.txt", "top secret")
    text = f"""<?xml version="1.0"?>
<!DOCTYPE movie [ <!ENTITY xxe SYSTEM "file://{secret}"> ]>
<movie><title>&xxe;</title></movie>"""
    assert parse_nfo(write(tmp_path, "xxe.nfo", text)) is None
    doctype_only = '<!DOCTYPE movie SYSTEM "http://127.0.0.1:9/x.dtd"><movie><title>T</title></movie>'
    assert parse_nfo_bytes(doctype_only.encode()) is None


@pytest.mark.parametrize(
    "content",
    [
        b"<movie><title>Unclosed</movie>",
        b"<movie><title>Bad & amp</title></movie>",
        b"<movie><title>&undefined;</title></movie>",
        b"",
        b"\xff\xfe\x00garbage",
        b"<notanfo><title>x</title></notanfo>",
        b"<movie>",
    ],
)
def test_malformed_nfos_give_none(tmp_path: Path, content: bytes) -> None:
    assert parse_nfo(write(tmp_path, "bad.nfo", content)) is None


def test_missing_and_oversized_nfos_give_none(tmp_path: Path) -> None:
    assert parse_nfo(tmp_path / "absent.nfo") is None
    big = write(tmp_path, "big.nfo", b"<movie><title>x</title>" + b" " * (MAX_NFO_BYTES + 1) + b"</movie>")
    assert parse_nfo(big) is None


def test_odd_values_are_skipped_not_fatal(tmp_path: Path) -> None:
    text = """<movie><title>  Spaced  </title><year>unknown</year><rating>7,5</rating>
        <premiered>2020-13-45</premiered><runtime>95 min</runtime><rating2>x</rating2></movie>"""
    nfo = parse_nfo(write(tmp_path, "odd.nfo", text))
    assert nfo is not None
    assert (nfo.title, nfo.year, nfo.community_rating, nfo.premiere_date, nfo.runtime_minutes) == (
        "Spaced",
        None,
        7.5,
        None,
        95,
    )
    assert nfo.lock_data is False


def test_nfo_candidates_follow_kodi_conventions() -> None:
    movie = "/movies/Movie (2020)/Movie (2020).mkv"
    assert nfo_candidates(movie, "Movie") == [
        PurePath("/movies/Movie (2020)/movie.nfo"),
        PurePath("/movies/Movie (2020)/Movie (2020).nfo"),
    ]
    assert nfo_candidates("/movies/Mixed.mkv", "Movie", in_mixed_folder=True) == [
        PurePath("/movies/Mixed.nfo")
    ]
    assert nfo_candidates("/tv/Show/Season 1/Show S01E01.mkv", "Episode") == [
        PurePath("/tv/Show/Season 1/Show S01E01.nfo")
    ]
    assert nfo_candidates("/tv/Show", "Series") == [PurePath("/tv/Show/tvshow.nfo")]
    assert nfo_candidates("/tv/Show/Season 1", "Season") == [PurePath("/tv/Show/Season 1/season.nfo")]
    assert nfo_candidates("/music/Band/LP", "MusicAlbum") == [PurePath("/music/Band/LP/album.nfo")]
    assert nfo_candidates("/music/Band", "MusicArtist") == [PurePath("/music/Band/artist.nfo")]
    assert nfo_candidates("/movies/Old (1985)", "Movie", video_type=VideoType.DVD)[0] == PurePath(
        "/movies/Old (1985)/VIDEO_TS/VIDEO_TS.nfo"
    )
    with pytest.raises(ValueError):
        nfo_candidates("/x", "Playlist")


def test_find_nfo_prefers_movie_nfo_then_the_file_stem(tmp_path: Path) -> None:
    folder = tmp_path / "Movie (2020)"
    video = write(tmp_path, "Movie (2020)/Movie (2020).mkv", b"")
    assert find_nfo(video, "Movie") is None
    stem_nfo = write(tmp_path, "Movie (2020)/Movie (2020).nfo", MOVIE_NFO)
    assert find_nfo(video, "Movie") == stem_nfo
    folder_nfo = write(tmp_path, "Movie (2020)/movie.nfo", MOVIE_NFO)
    assert find_nfo(video, "Movie") == folder_nfo
    assert find_nfo(video, "Movie", in_mixed_folder=True) == stem_nfo
    assert folder.is_dir()
