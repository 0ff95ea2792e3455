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


def test_post_only_legacy_user_routes():
    uid = "0123456789abcdef0123456789abcdef"

    def post(path: str):
        new, pairs = legacy_routes.rewrite(path, [], "POST")
        return None if new == path else (new, dict(pairs)["userId"])

    assert post(f"/Users/{uid}") == ("/Users", uid)
    assert post(f"/Users/{uid}/Password") == ("/Users/Password", uid)
    assert post(f"/Users/{uid}/Configuration") == ("/Users/Configuration", uid)
    # The spec's own POST routes under /Users are not user ids.
    for spec_path in ("/Users/New", "/Users/Password", "/Users/Configuration", "/Users/AuthenticateByName",
                      "/Users/ForgotPassword", f"/Users/{uid}/Policy"):
        assert post(spec_path) is None, spec_path
    assert legacy_routes.rewrite(f"/Users/{uid}", [], "GET")[0] == f"/Users/{uid}"
    assert legacy_routes.rewrite(f"/Users/{uid}", [], "DELETE")[0] == f"/Users/{uid}"


def test_jellyfin_web_saves_users_through_legacy_routes(server):
    """jellyfin-web 10.10.7 posts a user, its settings and its password to /Users/{id}/..."""
    uid = server.admin_id
    with server.admin() as c:
        user = c.get(f"/Users/{uid}").json()
        assert c.post(f"/Users/{uid}", json={**user, "Name": "boss"}).status_code == 204
        assert c.get(f"/Users/{uid}").json()["Name"] == "boss"
        config = {**user["Configuration"], "SubtitleLanguagePreference": "ger"}
        assert c.post(f"/Users/{uid}/Configuration", json=config).status_code == 204
        assert c.get(f"/Users/{uid}").json()["Configuration"]["SubtitleLanguagePreference"] == "ger"
        r = c.post(f"/Users/{uid}/Password", json={"CurrentPw": "s3cret!", "NewPw": "n3w-secret"})
        assert r.status_code == 204, r.text
    with server.client() as anonymous:
        r = anonymous.post("/Users/AuthenticateByName", json={"Username": "boss", "Pw": "n3w-secret"})
        assert r.status_code == 200
        assert anonymous.post(f"/Users/{uid}", json={"Name": "x"}).status_code == 401


def test_media_encoder_path_is_a_no_op_for_admins(server):
    """jellyfin-web's transcoding page posts here on every save; Jellyfin 10.10 answers 204 and
    changes nothing (the ffmpeg path is not settable over HTTP)."""
    with server.admin() as c:
        before = c.get("/System/Configuration/encoding").json()
        r = c.post("/System/MediaEncoder/Path", json={"Path": "/bin/sh", "PathType": "Custom"})
        assert r.status_code == 204
        assert c.get("/System/Configuration/encoding").json() == before
    with server.client() as anonymous:
        assert anonymous.post("/System/MediaEncoder/Path", json={"Path": "/bin/sh"}).status_code == 401
