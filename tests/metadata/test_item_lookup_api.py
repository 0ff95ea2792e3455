"""ItemLookup over HTTP against fake providers: remote search, external ids, Identify/Apply and
that an applied identification survives a rescan; provider failures give empty answers."""

from __future__ import annotations

import json
from pathlib import Path

from server.db.tables import Item, ItemPerson, ItemValue, Person
from server.library.scan.merge import merge_scanned_fields
from server.metadata.store import person_id
from tests.metadata.conftest import add_item, configure_providers, get_item
from tests.metadata.fakes import RELEASE, RELEASE_GROUP, closed_port

MOVIE_QUERY = {"SearchInfo": {"Name": "Fight Club", "Year": 1999}}


def test_movie_search_returns_mapped_results(meta_server):
    with meta_server.admin() as c:
        r = c.post("/Items/RemoteSearch/Movie", json=MOVIE_QUERY)
    assert r.status_code == 200, r.text
    results = r.json()
    assert [x["Name"] for x in results] == ["Fight Club", "Fight Club: Members Only"]
    assert results[0]["ProviderIds"] == {"Tmdb": "550"}
    assert results[0]["ProductionYear"] == 1999
    assert results[0]["PremiereDate"].startswith("1999-10-15")
    assert results[0]["SearchProviderName"] == "TheMovieDb"
    assert "ImageUrl" not in results[1]  # nulls are left out


def test_search_kinds_and_camel_case_bodies(meta_server):
    with meta_server.admin() as c:
        series = c.post("/Items/RemoteSearch/Series", json={"searchInfo": {"name": "Game of Thrones"}}).json()
        person = c.post("/Items/RemoteSearch/Person", json={"SearchInfo": {"Name": "Brad Pitt"}}).json()
        boxset = c.post("/Items/RemoteSearch/BoxSet", json={"SearchInfo": {"Name": "Alien"}}).json()
        trailer = c.post("/Items/RemoteSearch/Trailer", json=MOVIE_QUERY).json()
        album = c.post("/Items/RemoteSearch/MusicAlbum",
                       json={"SearchInfo": {"Name": "OK Computer", "AlbumArtists": ["Radiohead"]}}).json()
        artist = c.post("/Items/RemoteSearch/MusicArtist", json={"SearchInfo": {"Name": "Radiohead"}}).json()
        book = c.post("/Items/RemoteSearch/Book", json={"SearchInfo": {"Name": "Dune"}})
        video = c.post("/Items/RemoteSearch/MusicVideo", json={"SearchInfo": {"Name": "Karma Police"}})
    assert [(x["Name"], x["ProviderIds"]["Tmdb"]) for x in series] == [("Game of Thrones", "1399")]
    assert [x["Name"] for x in person] == ["Brad Pitt"]
    assert [x["Name"] for x in boxset] == ["Alien Collection"]
    assert trailer[0]["ProviderIds"] == {"Tmdb": "550"}
    assert album[0]["ProviderIds"] == {"MusicBrainzReleaseGroup": RELEASE_GROUP, "MusicBrainzAlbum": RELEASE}
    assert album[0]["AlbumArtist"]["Name"] == "Radiohead"
    assert artist[0]["SearchProviderName"] == "MusicBrainz"
    # No provider handles books or music videos: an empty list, not an error.
    assert (book.status_code, book.json()) == (200, [])
    assert (video.status_code, video.json()) == (200, [])


def test_search_provider_name_and_item_id(meta_server, fake_tmdb):
    item_id = add_item(meta_server, "/media/movies/Fight Club (1999)/fc.mkv", name="Fight Club",
                       production_year=1999)
    with meta_server.admin() as c:
        by_item = c.post("/Items/RemoteSearch/Movie", json={"ItemId": item_id}).json()
        wrong_provider = c.post("/Items/RemoteSearch/Movie", json={**MOVIE_QUERY, "SearchProviderName": "MusicBrainz"})
    assert by_item[0]["Name"] == "Fight Club"
    assert fake_tmdb.requests[0].query["query"] == "Fight Club"
    assert wrong_provider.json() == []


def test_search_validates_the_body(meta_server):
    with meta_server.admin() as c:
        r = c.post("/Items/RemoteSearch/Movie", content=b"{not json", headers={"Content-Type": "application/json"})
        empty = c.post("/Items/RemoteSearch/Movie", json={})
    assert r.status_code == 400
    assert (empty.status_code, empty.json()) == (200, [])


def test_tmdb_without_api_key_contacts_nothing(shared_server, fake_tmdb):
    with shared_server.admin() as c:
        assert c.post("/System/Configuration/tmdb", json={"BaseUrl": fake_tmdb.url}).status_code == 204
        r = c.post("/Items/RemoteSearch/Movie", json=MOVIE_QUERY)
        stored = c.get("/System/Configuration/tmdb").json()
    assert (r.status_code, r.json()) == (200, [])
    assert fake_tmdb.requests == []
    assert stored["BaseUrl"] == fake_tmdb.url and stored["ApiKey"] == ""


def test_provider_configuration_is_validated(shared_server):
    with shared_server.admin() as c:
        bad = c.post("/System/Configuration/tmdb", json={"BaseUrl": "ftp://example.invalid"})
        bad_timeout = c.post("/System/Configuration/musicbrainz", json={"TimeoutSeconds": "soon"})
        assert c.post("/System/Configuration/musicbrainz", json={"enabled": False}).status_code == 204
        defaults = c.get("/System/Configuration/musicbrainz").json()
    assert bad.status_code == 400 and "BaseUrl" in bad.json()["detail"]
    assert bad_timeout.status_code == 400
    # Keys in any case; what the body leaves out gets its default.
    assert defaults["BaseUrl"] == "https://musicbrainz.org" and defaults["Enabled"] is False


def test_provider_down_gives_empty_results_and_a_warning(shared_server, metadata_log):
    server = shared_server
    dead = f"http://127.0.0.1:{closed_port()}"
    configure_providers(server, dead, dead)
    item_id = add_item(server, "/media/movies/Heat (1995)/heat.mkv", name="Heat",
                       provider_ids={"Tmdb": "949"})
    with server.admin() as c:
        movie = c.post("/Items/RemoteSearch/Movie", json=MOVIE_QUERY)
        album = c.post("/Items/RemoteSearch/MusicAlbum", json={"SearchInfo": {"Name": "OK Computer"}})
        images = c.get(f"/Items/{item_id}/RemoteImages")
    assert (movie.status_code, movie.json()) == (200, [])
    assert (album.status_code, album.json()) == (200, [])
    assert images.status_code == 200 and images.json()["Images"] == [] and images.json()["TotalRecordCount"] == 0
    warnings = metadata_log.warnings()
    assert any("TheMovieDb" in m and "unreachable" in m for m in warnings), warnings
    assert any("MusicBrainz" in m for m in warnings), warnings


def test_slow_or_failing_provider_gives_empty_results(meta_server, fake_tmdb, metadata_log):
    """A provider that does not answer within its timeout gives an empty result: the search
    gives up on its own (the fake still holds the request when the reply comes back; it would
    hold it for a minute), and one that fails does the same."""
    configure_providers(meta_server, fake_tmdb.url, fake_tmdb.url, TimeoutSeconds=0.3)
    fake_tmdb.delay = 60.0  # held until released: only the client's own timeout ends the wait
    with meta_server.admin() as c:
        slow = c.post("/Items/RemoteSearch/Movie", json=MOVIE_QUERY)
        held = fake_tmdb.answered == 0 and len(fake_tmdb.requests) >= 1
        fake_tmdb.release.set()
        fake_tmdb.delay = 0
        fake_tmdb.fail_status = 503
        failing = c.post("/Items/RemoteSearch/Movie", json=MOVIE_QUERY)
    assert (slow.status_code, slow.json()) == (200, []) and held
    assert (failing.status_code, failing.json()) == (200, [])
    assert any("did not answer" in m for m in metadata_log.warnings())
    assert any("HTTP 503" in m for m in metadata_log.warnings())


def test_external_id_infos(meta_server):
    movie = add_item(meta_server, "/media/movies/A/a.mkv")
    album = add_item(meta_server, "/media/music/OK Computer", kind="MusicAlbum", is_folder=True)
    with meta_server.admin() as c:
        movie_ids = c.get(f"/Items/{movie}/ExternalIdInfos").json()
        album_ids = c.get(f"/Items/{album}/ExternalIdInfos").json()
        missing = c.get(f"/Items/{'f' * 32}/ExternalIdInfos")
    assert {(x["Key"], x.get("Type")) for x in movie_ids} == {("Tmdb", "Movie"), ("Imdb", None)}
    tmdb = next(x for x in movie_ids if x["Key"] == "Tmdb")
    assert tmdb["Name"] == "TheMovieDb" and tmdb["UrlFormatString"].endswith("movie/{0}")
    assert {x["Key"] for x in album_ids} == {"MusicBrainzAlbum", "MusicBrainzReleaseGroup", "MusicBrainzAlbumArtist"}
    assert missing.status_code == 404


def _apply(server, item_id: str, result: dict, replace_all_images: bool = True):
    with server.admin() as c:
        return c.post(f"/Items/RemoteSearch/Apply/{item_id}",
                      params={"replaceAllImages": str(replace_all_images).lower()}, json=result)


def test_apply_writes_metadata_locks_the_item_and_fetches_images(meta_server, fake_tmdb):
    item_id = add_item(meta_server, "/media/movies/fight.club.mkv", name="fight club", sort_name="fight club")
    with meta_server.admin() as c:
        result = c.post("/Items/RemoteSearch/Movie", json=MOVIE_QUERY).json()[0]
    r = _apply(meta_server, item_id, result)
    assert r.status_code == 204, r.text

    row = get_item(meta_server, item_id)
    assert (row.name, row.sort_name, row.production_year) == ("Fight Club", "fight club", 1999)
    assert row.overview.startswith("An insomniac") and row.tagline == "Mischief. Mayhem. Soap."
    assert row.official_rating == "R" and row.community_rating == 8.4
    assert row.run_time_ticks == 139 * 60 * 10_000_000
    assert row.premiere_date.year == 1999
    assert json.loads(row.genres_json) == ["Drama", "Thriller"]
    assert json.loads(row.provider_ids_json) == {"Tmdb": "550", "Imdb": "tt0137523"}
    assert row.is_locked

    values, people = meta_server.ctx.db.read_sync(lambda s: (
        s.query(ItemValue).filter(ItemValue.item_id == item_id).all(),
        s.query(ItemPerson, Person).join(Person, Person.id == ItemPerson.person_id)
        .filter(ItemPerson.item_id == item_id).order_by(ItemPerson.sort_order).all()))
    assert {(v.kind, v.clean_value) for v in values} >= {("Genre", "drama"), ("Genre", "thriller"),
                                                         ("Studio", "regency enterprises"), ("Tag", "insomnia")}
    assert [(p.name, ip.kind, ip.role) for ip, p in people][:3] == [
        ("Edward Norton", "Actor", "The Narrator"), ("Brad Pitt", "Actor", "Tyler Durden"),
        ("Helena Bonham Carter", "Actor", "Marla Singer")]
    brad = next(p for _ip, p in people if p.name == "Brad Pitt")
    assert brad.id == person_id("Brad Pitt") and json.loads(brad.provider_ids_json) == {"Tmdb": "287"}

    images = {img["Type"]: img for img in json.loads(row.images_json)}
    assert sorted(images) == ["Backdrop", "Logo", "Primary"]
    primary = Path(images["Primary"]["Path"])
    assert primary.is_file() and primary.is_relative_to(meta_server.data_dir / "metadata")
    assert images["Primary"]["Tag"] and images["Primary"]["BlurHash"]
    assert (images["Primary"]["Width"], images["Primary"]["Height"]) == (60, 90)
    # The English poster wins over the better-rated German one (metadata language is en).
    assert "/t/p/original/poster550.jpg" in fake_tmdb.paths()
    assert "/t/p/original/poster550-de.jpg" not in fake_tmdb.paths()


def test_applied_identification_survives_a_rescan(meta_server):
    item_id = add_item(meta_server, "/media/movies/rescan/fight.club.mkv", name="fight club", size=100)
    with meta_server.admin() as c:
        result = c.post("/Items/RemoteSearch/Movie", json=MOVIE_QUERY).json()[0]
    assert _apply(meta_server, item_id, result).status_code == 204
    downloaded = json.loads(get_item(meta_server, item_id).images_json)

    # What a rescan of the file finds: the file name as title, no genres, a local poster.
    scanned = {"name": "fight club", "sort_name": "fight club", "overview": None, "production_year": None,
               "genres_json": "[]", "provider_ids_json": "{}", "size": 4096, "file_mtime": 12.5,
               "images_json": json.dumps([{"Type": "Primary", "Path": "/media/movies/fight.club-poster.jpg",
                                           "Tag": "x", "Index": 0}])}

    def rescan(session) -> None:
        session.add(merge_scanned_fields(session.get(Item, item_id), dict(scanned)))

    meta_server.ctx.db.write_sync(rescan)
    row = get_item(meta_server, item_id)
    assert (row.name, row.production_year, row.is_locked) == ("Fight Club", 1999, True)
    assert row.overview.startswith("An insomniac")
    assert json.loads(row.genres_json) == ["Drama", "Thriller"]
    assert json.loads(row.provider_ids_json)["Tmdb"] == "550"
    assert (row.size, row.file_mtime) == (4096, 12.5)
    assert json.loads(row.images_json) == downloaded


def test_apply_keeps_existing_images_unless_replacing_all(meta_server, tmp_path):
    local = {"Type": "Primary", "Path": str(tmp_path / "poster.jpg"), "Tag": "local", "Index": 0}
    item_id = add_item(meta_server, "/media/movies/fc2.mkv", name="fc", images=[local])
    result = {"Name": "Fight Club", "ProviderIds": {"Tmdb": "550"}, "SearchProviderName": "TheMovieDb"}
    assert _apply(meta_server, item_id, result, replace_all_images=False).status_code == 204
    images = json.loads(get_item(meta_server, item_id).images_json)
    assert [i for i in images if i["Type"] == "Primary"] == [local]
    assert {i["Type"] for i in images} == {"Primary", "Backdrop", "Logo"}

    assert _apply(meta_server, item_id, result, replace_all_images=True).status_code == 204
    primary = [i for i in json.loads(get_item(meta_server, item_id).images_json) if i["Type"] == "Primary"]
    assert len(primary) == 1 and primary[0]["Tag"] != "local" and primary[0]["Provider"] == "TheMovieDb"


def test_apply_honours_fields_the_user_locked(meta_server):
    item_id = add_item(meta_server, "/media/movies/mine.mkv", name="My Title", locked_fields=["Name"])
    assert _apply(meta_server, item_id, {"Name": "Fight Club", "ProviderIds": {"Tmdb": "550"}}).status_code == 204
    row = get_item(meta_server, item_id)
    assert row.name == "My Title" and row.production_year == 1999 and row.is_locked


def test_apply_when_the_provider_is_down_keeps_the_search_result(shared_server, metadata_log):
    server = shared_server
    dead = f"http://127.0.0.1:{closed_port()}"
    configure_providers(server, dead, dead)
    item_id = add_item(server, "/media/movies/x.mkv", name="x")
    r = _apply(server, item_id, {"Name": "Fight Club", "ProductionYear": 1999, "ProviderIds": {"Tmdb": "550"},
                                 "SearchProviderName": "TheMovieDb"})
    assert r.status_code == 204
    row = get_item(server, item_id)
    assert (row.name, row.production_year, row.is_locked) == ("Fight Club", 1999, True)
    assert json.loads(row.provider_ids_json) == {"Tmdb": "550"}
    assert any("unreachable" in m for m in metadata_log.warnings())


def test_apply_album_from_musicbrainz(meta_server):
    item_id = add_item(meta_server, "/media/music/okc", kind="MusicAlbum", is_folder=True, name="okc")
    with meta_server.admin() as c:
        result = c.post("/Items/RemoteSearch/MusicAlbum", json={"SearchInfo": {"Name": "OK Computer"}}).json()[0]
    assert _apply(meta_server, item_id, result).status_code == 204
    row = get_item(meta_server, item_id)
    assert row.name == "OK Computer" and row.production_year == 1997
    assert json.loads(row.album_artists_json) == ["Radiohead"]
    assert json.loads(row.provider_ids_json)["MusicBrainzAlbum"] == RELEASE
    assert [i["Type"] for i in json.loads(row.images_json)] == ["Primary"]


def test_apply_errors(meta_server):
    item_id = add_item(meta_server, "/media/movies/e.mkv")
    missing = _apply(meta_server, "f" * 32, {"Name": "x", "ProviderIds": {"Tmdb": "550"}})
    no_ids = _apply(meta_server, item_id, {"Name": "x"})
    bad_id = _apply(meta_server, "not-a-guid", {"Name": "x", "ProviderIds": {"Tmdb": "550"}})
    assert missing.status_code == 404
    assert no_ids.status_code == 400 and "provider ids" in no_ids.json()["detail"]
    assert bad_id.status_code == 400
    assert not get_item(meta_server, item_id).is_locked


def test_apply_identifies_a_person(meta_server):
    pid = person_id("Brad Pitt")

    def ensure_person(session) -> None:
        if session.get(Person, pid) is None:
            session.add(Person(id=pid, name="Brad Pitt"))

    meta_server.ctx.db.write_sync(ensure_person)
    assert _apply(meta_server, pid, {"Name": "Brad Pitt", "ProviderIds": {"Tmdb": "287"}}).status_code == 204
    person = meta_server.ctx.db.read_sync(lambda s: s.get(Person, pid))
    assert json.loads(person.provider_ids_json) == {"Tmdb": "287", "Imdb": "nm0000093"}
    assert person.name == "Brad Pitt"
    assert person.image_path and Path(person.image_path).is_file() and person.image_tag


def test_only_admins_see_the_tmdb_api_key(meta_server):
    with meta_server.admin() as c:
        assert c.post("/Users/New", json={"Name": "keyviewer", "Password": "pw"}).status_code == 200
        admin_view = c.get("/System/Configuration/tmdb").json()
    with meta_server.client(device="keyviewer-device") as c:
        token = c.post("/Users/AuthenticateByName", json={"Username": "keyviewer", "Pw": "pw"}).json()["AccessToken"]
    with meta_server.client(token, "keyviewer-device") as c:
        user_view = c.get("/System/Configuration/tmdb")
    assert admin_view["ApiKey"] == "test-key"
    assert user_view.status_code == 200
    assert "ApiKey" not in user_view.json() and user_view.json()["BaseUrl"] == admin_view["BaseUrl"]
