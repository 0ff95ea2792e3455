"""RemoteImage and Tmdb over HTTP against fake providers: listing, filtering and paging remote
images, the providers of an item, downloading an image into <data>/metadata, and TMDb's
client configuration."""

from __future__ import annotations

import json
from pathlib import Path

from tests.metadata.conftest import add_item, configure_providers, get_item
from tests.metadata.fakes import RELEASE, TMDB_KEY, closed_port, json_reply


def test_remote_images_of_a_movie(meta_server, fake_tmdb):
    item_id = add_item(meta_server, "/media/movies/ri/fc.mkv", name="Fight Club", provider_ids={"Tmdb": "550"})
    with meta_server.admin() as c:
        every = c.get(f"/Items/{item_id}/RemoteImages").json()
        all_languages = c.get(f"/Items/{item_id}/RemoteImages", params={"includeAllLanguages": "true"}).json()
        posters = c.get(f"/Items/{item_id}/RemoteImages", params={"type": "Primary", "includeAllLanguages": "true",
                                                                  "startIndex": 1, "limit": 1}).json()
        by_name = c.get(f"/Items/{item_id}/RemoteImages", params={"providerName": "MusicBrainz"}).json()
    assert every["Providers"] == ["TheMovieDb"]
    # The German poster is left out unless all languages are asked for.
    assert every["TotalRecordCount"] == 4 and all_languages["TotalRecordCount"] == 5
    urls = [i["Url"] for i in every["Images"]]
    first_poster = next(i["Url"] for i in every["Images"] if i["Type"] == "Primary")
    assert first_poster == f"{fake_tmdb.url}/t/p/original/poster550.jpg"  # metadata language first
    assert all("poster550-de" not in u for u in urls)
    assert {i["Type"] for i in every["Images"]} == {"Primary", "Backdrop", "Logo"}
    # Paging keeps the total.
    assert posters["TotalRecordCount"] == 3 and len(posters["Images"]) == 1
    # Posters: metadata language, then English, then without text, then other languages.
    assert posters["Images"][0]["Url"].endswith("/poster550-textless.jpg")
    assert by_name["Images"] == [] and by_name["Providers"] == ["TheMovieDb"]


def test_remote_images_of_a_season_use_the_series_ids(meta_server, fake_tmdb):
    series = add_item(meta_server, "/media/tv/GoT", kind="Series", is_folder=True, name="Game of Thrones",
                      provider_ids={"Tmdb": "1399"})
    season = add_item(meta_server, "/media/tv/GoT/Season 1", kind="Season", is_folder=True, index_number=1,
                      series_id=series, parent_id=series)
    with meta_server.admin() as c:
        images = c.get(f"/Items/{season}/RemoteImages").json()
        providers = c.get(f"/Items/{season}/RemoteImages/Providers").json()
    assert [i["Url"] for i in images["Images"]] == [f"{fake_tmdb.url}/t/p/original/got-s1.jpg"]
    # TVmaze offers season images too, but knows no show by a TMDb id alone
    assert providers == [{"Name": "TheMovieDb", "SupportedImages": ["Primary"]},
                         {"Name": "TVmaze", "SupportedImages": ["Primary"]}]
    assert "/3/tv/1399/season/1/images" in fake_tmdb.paths()


def test_image_providers_per_kind(meta_server):
    movie = add_item(meta_server, "/media/movies/ri/p.mkv")
    album = add_item(meta_server, "/media/music/ri-album", kind="MusicAlbum", is_folder=True)
    photo = add_item(meta_server, "/media/photos/ri.jpg", kind="Photo")
    with meta_server.admin() as c:
        movie_providers = c.get(f"/Items/{movie}/RemoteImages/Providers").json()
        album_providers = c.get(f"/Items/{album}/RemoteImages/Providers").json()
        photo_providers = c.get(f"/Items/{photo}/RemoteImages/Providers").json()
        missing = c.get(f"/Items/{'e' * 32}/RemoteImages/Providers")
    assert movie_providers == [{"Name": "TheMovieDb", "SupportedImages": ["Primary", "Backdrop", "Logo"]}]
    assert [p["Name"] for p in album_providers] == ["MusicBrainz"]
    assert photo_providers == []
    assert missing.status_code == 404


def test_cover_art_of_an_album(meta_server, fake_musicbrainz):
    album = add_item(meta_server, "/media/music/ri-okc", kind="MusicAlbum", is_folder=True,
                     provider_ids={"MusicBrainzAlbum": RELEASE})
    with meta_server.admin() as c:
        result = c.get(f"/Items/{album}/RemoteImages").json()
    assert [(i["Type"], i["Url"]) for i in result["Images"]] == [
        ("Primary", fake_musicbrainz.url + "/img/front.jpg"), ("BoxRear", fake_musicbrainz.url + "/img/back.jpg")]
    assert result["Images"][0]["ThumbnailUrl"] == fake_musicbrainz.url + "/img/front-500.jpg"


def test_download_saves_the_image_with_a_new_tag(meta_server, fake_tmdb):
    item_id = add_item(meta_server, "/media/movies/dl/fc.mkv", name="Fight Club")
    first_url = f"{fake_tmdb.url}/t/p/original/poster550.jpg"
    second_url = f"{fake_tmdb.url}/t/p/original/poster550-textless.jpg"
    with meta_server.admin() as c:
        r1 = c.post(f"/Items/{item_id}/RemoteImages/Download", params={"type": "Primary", "imageUrl": first_url})
        first = json.loads(get_item(meta_server, item_id).images_json)
        r2 = c.post(f"/Items/{item_id}/RemoteImages/Download", params={"type": "Primary", "imageUrl": second_url})
        second = json.loads(get_item(meta_server, item_id).images_json)
        backdrop_url = f"{fake_tmdb.url}/t/p/original/backdrop550.jpg"
        for _ in range(2):
            assert c.post(f"/Items/{item_id}/RemoteImages/Download",
                          params={"type": "Backdrop", "imageUrl": backdrop_url}).status_code == 204
        third = json.loads(get_item(meta_server, item_id).images_json)
    assert (r1.status_code, r2.status_code) == (204, 204)
    assert len(first) == 1 and first[0]["Type"] == "Primary"
    old_path = Path(first[0]["Path"])
    assert old_path.is_relative_to(meta_server.data_dir / "metadata") and first[0]["Tag"]
    assert len(second) == 1 and second[0]["Tag"] != first[0]["Tag"]
    assert Path(second[0]["Path"]).is_file() and not old_path.exists()  # the replaced file is removed
    backdrops = [i for i in third if i["Type"] == "Backdrop"]
    assert [b["Index"] for b in backdrops] == [0, 1]  # backdrops are added, not replaced


def test_download_errors(meta_server, fake_tmdb):
    item_id = add_item(meta_server, "/media/movies/dl/err.mkv")
    fake_tmdb.routes["/not-an-image"] = lambda p, q: json_reply({"hello": "world"})
    dead = f"http://127.0.0.1:{closed_port()}/x.jpg"
    with meta_server.admin() as c:
        def download(**params):
            return c.post(f"/Items/{item_id}/RemoteImages/Download", params=params)

        missing_remote = download(type="Primary", imageUrl=f"{fake_tmdb.url}/nothing-here.jpg")
        not_image = download(type="Primary", imageUrl=f"{fake_tmdb.url}/not-an-image")
        unreachable = download(type="Primary", imageUrl=dead)
        no_url = download(type="Primary")
        bad_scheme = download(type="Primary", imageUrl="file:///etc/passwd")
        bad_type = download(type="Poster", imageUrl=f"{fake_tmdb.url}/t/p/original/a.jpg")
        no_item = c.post(f"/Items/{'d' * 32}/RemoteImages/Download",
                         params={"type": "Primary", "imageUrl": f"{fake_tmdb.url}/t/p/original/a.jpg"})
    assert missing_remote.status_code == 404
    assert not_image.status_code == 400 and "not a readable image" in not_image.json()["detail"]
    assert unreachable.status_code == 502
    assert no_url.status_code == 400 and bad_scheme.status_code == 400 and bad_type.status_code == 400
    assert no_item.status_code == 404
    assert json.loads(get_item(meta_server, item_id).images_json) == []


def test_remote_images_need_an_admin_to_download(meta_server, fake_tmdb):
    item_id = add_item(meta_server, "/media/movies/dl/user.mkv")
    with meta_server.admin() as c:
        r = c.post("/Users/New", json={"Name": "viewer", "Password": "pw"})
        assert r.status_code == 200, r.text
    with meta_server.client(device="viewer-device") as c:
        token = c.post("/Users/AuthenticateByName", json={"Username": "viewer", "Pw": "pw"}).json()["AccessToken"]
    with meta_server.client(token, "viewer-device") as c:
        listed = c.get(f"/Items/{item_id}/RemoteImages")
        download = c.post(f"/Items/{item_id}/RemoteImages/Download",
                          params={"type": "Primary", "imageUrl": f"{fake_tmdb.url}/t/p/original/a.jpg"})
    assert listed.status_code == 200
    assert download.status_code == 403


def test_tmdb_client_configuration(meta_server, fake_tmdb):
    with meta_server.admin() as c:
        configured = c.get("/Tmdb/ClientConfiguration").json()
        again = c.get("/Tmdb/ClientConfiguration").json()
        assert c.post("/System/Configuration/tmdb", json={"ApiKey": ""}).status_code == 204
        without_key = c.get("/Tmdb/ClientConfiguration").json()
    assert configured["SecureBaseUrl"] == fake_tmdb.url + "/t/p/"
    assert configured["PosterSizes"] == ["w92", "w500", "original"]
    assert again == configured and fake_tmdb.paths().count("/3/configuration") == 1  # cached
    assert fake_tmdb.requests[0].query["api_key"] == TMDB_KEY
    # Without a key nothing is contacted: TMDb's published defaults.
    assert without_key["SecureBaseUrl"] == "https://image.tmdb.org/t/p/"
    assert without_key["BaseUrl"] == "http://image.tmdb.org/t/p/"
    assert "w500" in without_key["PosterSizes"] and "original" in without_key["BackdropSizes"]
    assert fake_tmdb.paths().count("/3/configuration") == 1


def test_tmdb_client_configuration_when_tmdb_is_down(shared_server, metadata_log):
    dead = f"http://127.0.0.1:{closed_port()}"
    configure_providers(shared_server, dead, dead)
    with shared_server.admin() as c:
        r = c.get("/Tmdb/ClientConfiguration")
    assert r.status_code == 200
    assert r.json()["SecureBaseUrl"] == dead + "/t/p/" and r.json()["StillSizes"]
    assert any("configuration failed" in m for m in metadata_log.warnings())
