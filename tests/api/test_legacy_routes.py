"""The user-scoped aliases Jellyfin still answers (not in its spec) reach the spec routes."""

from __future__ import annotations

from server.http import legacy_routes


def rewrite(path: str) -> tuple[str, str] | None:
    new, pairs = legacy_routes.rewrite(path, [])
    return None if new == path else (new, dict(pairs)["userId"])


def test_rewrite_table():
    uid = "0123456789abcdef0123456789abcdef"
    assert rewrite(f"/Users/{uid}/Items") == ("/Items", uid)
    assert rewrite(f"/users/{uid}/items/abc") == ("/Items/abc", uid)
    assert rewrite(f"/Users/{uid}/Items/Resume") == ("/UserItems/Resume", uid)
    assert rewrite(f"/Users/{uid}/Items/Latest") == ("/Items/Latest", uid)
    assert rewrite(f"/Users/{uid}/Items/abc/UserData") == ("/UserItems/abc/UserData", uid)
    assert rewrite(f"/Users/{uid}/FavoriteItems/abc") == ("/UserFavoriteItems/abc", uid)
    assert rewrite(f"/Users/{uid}/PlayedItems/abc") == ("/UserPlayedItems/abc", uid)
    assert rewrite(f"/Users/{uid}/PlayingItems/abc/Progress") == ("/PlayingItems/abc/Progress", uid)
    assert rewrite(f"/Users/{uid}/Views") == ("/UserViews", uid)
    # Spec routes under /Users are left alone.
    assert rewrite(f"/Users/{uid}") is None
    assert rewrite(f"/Users/{uid}/Policy") is None
    assert rewrite(f"/Users/{uid}/Password") is None
    assert rewrite("/Items") is None


def test_legacy_paths_answer_like_the_spec_routes(server):
    with server.admin() as c:
        spec = c.get("/UserViews", params={"userId": server.admin_id})
        legacy = c.get(f"/Users/{server.admin_id}/Views")
        assert legacy.status_code == spec.status_code == 200 and legacy.json() == spec.json()
        root = c.get(f"/Users/{server.admin_id}/Items/Root")
        assert root.status_code == 200 and root.json()["Type"] == "UserRootFolder"
        items = c.get(f"/emby/Users/{server.admin_id}/Items", params={"Recursive": "true"})
        assert items.status_code == 200 and items.json()["TotalRecordCount"] == 0
        assert c.get(f"/Users/{server.admin_id}/Items/0123456789abcdef0123456789abcdef").status_code == 404
    with server.client() as anonymous:
        assert anonymous.get(f"/Users/{server.admin_id}/Views").status_code == 401
