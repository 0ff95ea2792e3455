"""LibraryStructure over HTTP, with the status codes Jellyfin's own tests expect."""

from __future__ import annotations

from pathlib import Path

from tests.library_helpers import allow_roots


def test_virtual_folder_lifecycle_and_errors(server, tmp_path: Path) -> None:
    movies, more = tmp_path / "movies", tmp_path / "more"
    movies.mkdir()
    more.mkdir()
    allow_roots(server, tmp_path)
    with server.admin() as c:
        r = c.post("/Library/VirtualFolders", params={"name": "test", "collectionType": "movies",
                                                     "paths": [str(movies)], "refreshLibrary": "true"},
                   json={"LibraryOptions": {"EnableRealtimeMonitor": False, "PathInfos": []}})
        assert r.status_code == 204, r.text
        folders = c.get("/Library/VirtualFolders").json()
        assert [(f["Name"], f["CollectionType"], f["Locations"]) for f in folders] == [("test", "movies", [str(movies)])]
        lib_id = folders[0]["ItemId"]
        assert folders[0]["LibraryOptions"]["EnableRealtimeMonitor"] is False
        assert folders[0]["LibraryOptions"]["PathInfos"] == [{"Path": str(movies)}]

        # whitespace names -> 400, duplicates -> 400
        assert c.post("/Library/VirtualFolders", params={"name": "  "}).status_code == 400
        assert c.post("/Library/VirtualFolders", params={"name": "TEST"}).status_code == 400

        # options
        assert c.post("/Library/VirtualFolders/LibraryOptions",
                      json={"Id": "0" * 32, "LibraryOptions": {}}).status_code == 404
        r = c.post("/Library/VirtualFolders/LibraryOptions", json={"Id": lib_id, "LibraryOptions": {
            "EnableRealtimeMonitor": True, "EnablePhotos": False}})
        assert r.status_code == 204, r.text
        options = c.get("/Library/VirtualFolders").json()[0]["LibraryOptions"]
        assert options["EnableRealtimeMonitor"] is True and options["EnablePhotos"] is False

        # paths
        assert c.post("/Library/VirtualFolders/Paths", json={"Name": "test", "Path": "/does/not/exist"}).status_code == 404
        assert c.post("/Library/VirtualFolders/Paths", json={"Name": "nope", "Path": str(more)}).status_code == 404
        assert c.post("/Library/VirtualFolders/Paths", json={"Name": "test", "Path": "/etc"}).status_code == 403
        assert c.post("/Library/VirtualFolders/Paths", json={"Name": "test", "Path": str(more)}).status_code == 204
        assert c.get("/Library/PhysicalPaths").json() == sorted([str(movies), str(more)])
        assert c.post("/Library/VirtualFolders/Paths/Update",
                      json={"Name": " ", "PathInfo": {"Path": str(more)}}).status_code == 400
        assert c.post("/Library/VirtualFolders/Paths/Update",
                      json={"Name": "test", "PathInfo": {"Path": str(more)}}).status_code == 204
        assert c.delete("/Library/VirtualFolders/Paths", params={"name": " ", "path": str(more)}).status_code == 400
        assert c.delete("/Library/VirtualFolders/Paths", params={"name": "nope", "path": str(more)}).status_code == 404
        assert c.delete("/Library/VirtualFolders/Paths", params={"name": "test", "path": "/x"}).status_code == 404
        assert c.delete("/Library/VirtualFolders/Paths", params={"name": "test", "path": str(more)}).status_code == 204
        assert c.get("/Library/PhysicalPaths").json() == [str(movies)]

        # rename keeps the id
        assert c.post("/Library/VirtualFolders/Name", params={"name": " ", "newName": "x"}).status_code == 400
        assert c.post("/Library/VirtualFolders/Name", params={"name": "test", "newName": " "}).status_code == 400
        assert c.post("/Library/VirtualFolders/Name", params={"name": "nope", "newName": "x"}).status_code == 404
        assert c.post("/Library/VirtualFolders/Name", params={"name": "test", "newName": "Films"}).status_code == 204
        folders = c.get("/Library/VirtualFolders").json()
        assert [(f["Name"], f["ItemId"]) for f in folders] == [("Films", lib_id)]

        # remove
        assert c.delete("/Library/VirtualFolders", params={"name": "doesntExist"}).status_code == 404
        assert c.delete("/Library/VirtualFolders", params={"name": "Films"}).status_code == 204
        assert c.get("/Library/VirtualFolders").json() == []
        body = c.delete("/Library/VirtualFolders", params={"name": "Films"})
        assert body.status_code == 404 and body.headers["content-type"].startswith("application/problem+json")


def test_library_operations_need_admin_and_options_info(server) -> None:
    with server.client() as anon:
        assert anon.get("/Library/VirtualFolders").status_code == 401
    with server.admin() as c:
        info = c.get("/Libraries/AvailableOptions", params={"libraryContentType": "tvshows"}).json()
        assert {t["Type"] for t in info["TypeOptions"]} == {"Series", "Season", "Episode"}
        assert info["MetadataReaders"][0]["Name"] == "Nfo"
        assert c.post(f"/Items/{'0' * 32}/Refresh").status_code == 404
        assert c.post("/Library/Refresh").status_code == 204
        assert c.post("/Library/Media/Updated", json={"Updates": [{"Path": "/x", "UpdateType": "Created"}]}).status_code == 204
        assert c.post("/Library/Movies/Added", params={"tmdbId": "1"}).status_code == 204
        assert c.post("/Library/Series/Updated").status_code == 204
