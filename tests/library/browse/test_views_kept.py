"""UserViews are kept between requests (ItemService.views); every change that shows in them is
seen on the very next request: the user's hidden and ordered views, their policy's folders, a
renamed library, user data on a library, and a library added or removed."""

from __future__ import annotations

from server.db.tables import Item
from tests.conftest import LiveServer
from tests.library_helpers import add_library_and_scan


def _views(c, uid: str) -> list[dict]:
    r = c.get("/UserViews", params={"userId": uid})
    assert r.status_code == 200, r.text
    return r.json()["Items"]


def _names(c, uid: str) -> list[str]:
    return [v["Name"] for v in _views(c, uid)]


def test_views_follow_every_change(server: LiveServer, tmp_path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    lib_a = add_library_and_scan(server, "Alpha", "movies", [tmp_path / "a"])
    lib_b = add_library_and_scan(server, "Beta", "music", [tmp_path / "b"])
    admin = server.admin_id
    with server.admin() as c:
        assert _names(c, admin) == ["Alpha", "Beta"]
        assert _names(c, admin) == ["Alpha", "Beta"]  # kept now
        # the user's configuration: order, then a hidden view
        config = c.get(f"/Users/{admin}").json()["Configuration"]
        config["OrderedViews"] = [lib_b, lib_a]
        assert c.post("/Users/Configuration", params={"userId": admin}, json=config).status_code == 204
        assert _names(c, admin) == ["Beta", "Alpha"]
        config["MyMediaExcludes"] = [lib_b]
        assert c.post("/Users/Configuration", params={"userId": admin}, json=config).status_code == 204
        assert _names(c, admin) == ["Alpha"]
        assert [v["Name"] for v in c.get("/UserViews", params={"userId": admin, "includeHidden": "true"})
                .json()["Items"]] == ["Beta", "Alpha"]
        config["MyMediaExcludes"] = []
        assert c.post("/Users/Configuration", params={"userId": admin}, json=config).status_code == 204
        assert _names(c, admin) == ["Beta", "Alpha"]
        # user data on a library
        assert not _views(c, admin)[1]["UserData"]["IsFavorite"]
        assert c.post(f"/UserFavoriteItems/{lib_a}", params={"userId": admin}).status_code == 200
        assert _views(c, admin)[1]["UserData"]["IsFavorite"]
        # a rename written by anyone (here straight through the database writer)
        server.ctx.db.write_sync(lambda s: setattr(s.get(Item, lib_a), "name", "Alpha Prime"))
        assert _names(c, admin) == ["Beta", "Alpha Prime"]
        # another user's policy: their folders only, then one more
        uid = c.post("/Users/New", json={"Name": "viewer", "Password": "pw"}).json()["Id"]
        policy = c.get(f"/Users/{uid}").json()["Policy"]
        policy.update(EnableAllFolders=False, EnabledFolders=[lib_a])
        assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
        assert _names(c, uid) == ["Alpha Prime"]
        policy.update(EnabledFolders=[lib_a, lib_b])
        assert c.post(f"/Users/{uid}/Policy", json=policy).status_code == 204
        assert _names(c, uid) == ["Alpha Prime", "Beta"]
        assert _names(c, admin) == ["Beta", "Alpha Prime"]  # each user's own answer
    (tmp_path / "c").mkdir()
    add_library_and_scan(server, "Gamma", "tvshows", [tmp_path / "c"])
    with server.admin() as c:
        assert _names(c, admin) == ["Beta", "Alpha Prime", "Gamma"]
        assert c.delete("/Library/VirtualFolders", params={"name": "Gamma"}).status_code == 204
        assert _names(c, admin) == ["Beta", "Alpha Prime"]


def test_views_kept_per_casing(server: LiveServer, tmp_path) -> None:
    """The encoded answer is kept per casing: camelCase and PascalCase each follow a change."""
    (tmp_path / "d").mkdir()
    lib = add_library_and_scan(server, "Delta", "movies", [tmp_path / "d"])
    camel = {"Accept": 'application/json; profile="CamelCase"'}
    admin = server.admin_id
    with server.admin() as c:
        for _ in range(2):
            pascal = c.get("/UserViews", params={"userId": admin}).json()
            assert [v["Name"] for v in pascal["Items"]] == ["Delta"] and pascal["TotalRecordCount"] == 1
            r = c.get("/UserViews", params={"userId": admin}, headers=camel)
            assert r.headers["content-type"].startswith("application/json")
            assert [v["name"] for v in r.json()["items"]] == ["Delta"] and r.json()["totalRecordCount"] == 1
        server.ctx.db.write_sync(lambda s: setattr(s.get(Item, lib), "name", "Delta Prime"))
        assert [v["name"] for v in c.get("/UserViews", params={"userId": admin}, headers=camel).json()["items"]] \
            == ["Delta Prime"]
        assert _names(c, admin) == ["Delta Prime"]
