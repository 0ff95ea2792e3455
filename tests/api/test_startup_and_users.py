"""The startup wizard and users, as Jellyfin's integration tests assert them."""

from __future__ import annotations

import time

import httpx


def test_startup_configuration_round_trip(fresh_server):
    with fresh_server.client() as c:
        body = {"UICulture": "fr-FR", "MetadataCountryCode": "FR", "PreferredMetadataLanguage": "fr"}
        assert c.post("/Startup/Configuration", json=body).status_code == 204
        assert c.get("/Startup/Configuration").json() == body


def test_startup_user_flow_and_lockdown_after_completion(fresh_server):
    with fresh_server.client() as c:
        first = c.get("/Startup/User")
        assert first.status_code == 200
        assert first.json()["Name"]
        assert "Password" not in first.json()  # null is left out
        assert c.post("/Startup/User", json={"Name": "NewName", "Password": "NewPassword"}).status_code == 204
        again = c.get("/Startup/User").json()
        assert again["Name"] == "NewName"
        assert again["Password"] and again["Password"] != "NewPassword"
        assert c.post("/Startup/RemoteAccess", json={"EnableRemoteAccess": True,
                                                     "EnableAutomaticPortMapping": False}).status_code == 204
        assert httpx.get(fresh_server.url + "/System/Info/Public").json()["StartupWizardCompleted"] is False
        assert c.post("/Startup/Complete").status_code == 204
        assert c.get("/Startup/User").status_code == 401
        assert c.post("/Startup/Complete").status_code == 401
    assert httpx.get(fresh_server.url + "/System/Info/Public").json()["StartupWizardCompleted"] is True


def test_wizard_operations_are_admin_only_after_completion(server):
    with server.admin() as admin:
        assert admin.get("/Startup/Configuration").status_code == 200
        user = admin.post("/Users/New", json={"Name": "viewer", "Password": "pw"}).json()
    with server.client() as c:
        token = c.post("/Users/AuthenticateByName", json={"Username": "viewer", "Pw": "pw"}).json()["AccessToken"]
    with server.client(token, "viewer-device") as viewer:
        r = viewer.get("/Startup/Configuration")
        assert r.status_code == 403
        assert "administrator" in r.json()["detail"]
        assert viewer.get("/Users/Me").json()["Id"] == user["Id"]


def test_users_public_is_empty_and_users_lists_the_admin(server):
    assert httpx.get(server.url + "/Users/Public").json() == []
    with server.admin() as c:
        users = c.get("/Users").json()
    assert [u["Name"] for u in users] == ["admin"]
    assert users[0]["HasConfiguredPassword"] is True
    assert users[0]["Policy"]["IsAdministrator"] is True


def test_user_without_password_reports_no_password(fresh_server):
    with fresh_server.client() as c:
        c.post("/Startup/User", json={"Name": "nopw"})
        c.post("/Startup/Complete")
        token = c.post("/Users/AuthenticateByName", json={"Username": "nopw", "Pw": ""}).json()["AccessToken"]
    with fresh_server.client(token) as c:
        users = c.get("/Users").json()
    assert users[0]["HasConfiguredPassword"] is False


def test_create_user_and_name_rules(server):
    with server.admin() as c:
        r = c.post("/Users/New", json={"Name": "Alice"})
        assert r.status_code == 200
        assert r.json()["HasPassword"] is False and r.json()["HasConfiguredPassword"] is False
        for bad in (None, "", "   ", "\U0001f600\U0001f600", " lead", "trail "):
            assert c.post("/Users/New", json={"Name": bad}).status_code == 400, repr(bad)
        assert c.post("/Users/New", json={"Name": "alice"}).status_code == 400  # taken, any case


def test_delete_unknown_user_is_404(server):
    with server.admin() as c:
        assert c.delete("/Users/0123456789abcdef0123456789abcdef").status_code == 404


def test_password_set_and_cleared(server):
    with server.admin() as c:
        uid = c.post("/Users/New", json={"Name": "bob"}).json()["Id"]
        assert c.post(f"/Users/Password?userId={uid}", json={"NewPw": "4randomPa$$word"}).status_code == 204
        u = c.get(f"/Users/{uid}").json()
        assert u["HasPassword"] is True and u["HasConfiguredPassword"] is True
        assert c.post(f"/Users/Password?userId={uid}", json={"CurrentPw": "4randomPa$$word"}).status_code == 204
        u = c.get(f"/Users/{uid}").json()
        assert u["HasPassword"] is False and u["HasConfiguredPassword"] is False


def test_passwords_are_argon2_hashed(server):
    from sqlmodel import select

    from server.db.tables import User

    rows = server.ctx.db.read_sync(lambda s: list(s.scalars(select(User))))
    assert rows[0].password_hash.startswith("$argon2id$")
    assert "s3cret!" not in rows[0].password_hash


def test_logout_revokes_the_token(server):
    with server.client() as c:
        token = c.post("/Users/AuthenticateByName", json={"Username": "admin", "Pw": "s3cret!"}).json()["AccessToken"]
    with server.client(token, "phone") as phone:
        assert phone.get("/Users/Me").status_code == 200
        assert phone.post("/Sessions/Logout").status_code == 204
        r = phone.get("/Users/Me")
    assert r.status_code == 401
    assert r.headers["content-type"].startswith("application/problem+json")


def test_failed_logins_lock_the_account_for_a_while_without_disabling_it(server):
    with server.admin() as c:
        uid = c.post("/Users/New", json={"Name": "carol", "Password": "right"}).json()["Id"]
    with server.client(device="attacker") as anon:
        for _ in range(2):
            assert anon.post("/Users/AuthenticateByName", json={"Username": "carol", "Pw": "wrong"}).status_code == 401
        r = anon.post("/Users/AuthenticateByName", json={"Username": "carol", "Pw": "wrong"})
        assert r.status_code == 401 and "locked" in r.json()["detail"]
        r = anon.post("/Users/AuthenticateByName", json={"Username": "carol", "Pw": "right"})
    assert r.status_code == 401 and "locked" in r.json()["detail"]
    with server.admin() as c:
        policy = c.get(f"/Users/{uid}").json()["Policy"]
        assert policy["IsDisabled"] is False and policy["InvalidLoginAttemptCount"] == 3
        entries = c.get("/System/ActivityLog/Entries").json()["Items"]
    assert any(e["Type"] == "AuthenticationFailed" for e in entries)
    assert any(e["Type"] == "UserLockedOut" and "carol" in e["Name"] for e in entries)


def test_tokens_are_per_device(server):
    with server.client(device="tv") as c:
        tv = c.post("/Users/AuthenticateByName", json={"Username": "admin", "Pw": "s3cret!"}).json()["AccessToken"]
    with server.client(device="phone") as c:
        phone = c.post("/Users/AuthenticateByName", json={"Username": "admin", "Pw": "s3cret!"}).json()["AccessToken"]
    assert tv != phone
    with server.client(device="tv") as c:
        tv2 = c.post("/Users/AuthenticateByName", json={"Username": "admin", "Pw": "s3cret!"}).json()["AccessToken"]
    assert httpx.get(server.url + "/Users/Me", headers={"X-Emby-Token": tv}).status_code == 401
    assert httpx.get(server.url + "/Users/Me", headers={"X-Emby-Token": tv2}).status_code == 200
    assert httpx.get(server.url + "/Users/Me", headers={"X-Emby-Token": phone}).status_code == 200
    with server.admin() as c:
        devices = {d["Id"] for d in c.get("/Devices").json()["Items"]}
    assert {"tv", "phone"} <= devices


def test_a_devices_last_activity_is_written_on_use_at_most_once_a_minute(server):
    with server.client(device="lamp") as c:
        token = c.post("/Users/AuthenticateByName", json={"Username": "admin", "Pw": "s3cret!"}).json()["AccessToken"]

    def last_activity() -> str:
        with server.admin() as c:
            return next(d["DateLastActivity"] for d in c.get("/Devices").json()["Items"] if d["Id"] == "lamp")

    signed_in = last_activity()
    time.sleep(1.1)
    assert httpx.get(server.url + "/Users/Me", headers={"X-Emby-Token": token}).status_code == 200
    first_use = last_activity()
    assert first_use > signed_in  # the token's first request writes it
    time.sleep(1.1)
    assert httpx.get(server.url + "/Users/Me", headers={"X-Emby-Token": token}).status_code == 200
    assert last_activity() == first_use  # not again within the minute


def test_authentication_result_server_id_matches_public_info(server):
    public = httpx.get(server.url + "/System/Info/Public").json()
    with server.client(device="x") as c:
        result = c.post("/Users/AuthenticateByName", json={"Username": "admin", "Pw": "s3cret!"}).json()
    assert result["ServerId"] == public["Id"]
    assert result["User"]["ServerId"] == public["Id"]
    assert result["SessionInfo"]["DeviceId"] == "x"


def test_api_keys_act_as_administrator(server):
    with server.admin() as c:
        assert c.post("/Auth/Keys", params={"app": "Scripts"}).status_code == 204
        keys = c.get("/Auth/Keys").json()["Items"]
    key = next(k for k in keys if k["AppName"] == "Scripts")["AccessToken"]
    assert httpx.get(server.url + "/System/Logs", params={"api_key": key}).status_code == 200
    assert httpx.get(server.url + "/Users", headers={"X-MediaBrowser-Token": key}).status_code == 200
    with server.admin() as c:
        assert c.delete(f"/Auth/Keys/{key}").status_code == 204
    assert httpx.get(server.url + "/System/Logs", params={"ApiKey": key}).status_code == 401


def test_permission_errors_name_the_permission(server):
    with server.admin() as c:
        c.post("/Users/New", json={"Name": "dave", "Password": "pw"})
    with server.client(device="dave-phone") as c:
        token = c.post("/Users/AuthenticateByName", json={"Username": "dave", "Pw": "pw"}).json()["AccessToken"]
    with server.client(token, "dave-phone") as dave:
        r = dave.get("/System/Logs")
    assert r.status_code == 403
    assert "elevation" in r.json()["detail"]


def test_quick_connect_flow(server):
    anon_headers = {"Authorization": 'MediaBrowser Client="TV", Device="Living room", DeviceId="tv-1", Version="1"'}
    assert httpx.get(server.url + "/QuickConnect/Enabled").json() is True
    init = httpx.post(server.url + "/QuickConnect/Initiate", headers=anon_headers).json()
    assert len(init["Code"]) == 6 and init["Authenticated"] is False
    with server.admin() as c:
        assert c.post("/QuickConnect/Authorize", params={"code": init["Code"]}).json() is True
    state = httpx.get(server.url + "/QuickConnect/Connect", params={"secret": init["Secret"]}).json()
    assert state["Authenticated"] is True
    r = httpx.post(server.url + "/Users/AuthenticateWithQuickConnect", json={"Secret": init["Secret"]},
                   headers=anon_headers)
    assert r.status_code == 200
    assert r.json()["User"]["Name"] == "admin"


def test_display_preferences_round_trip(server):
    with server.admin() as c:
        prefs = c.get("/DisplayPreferences/usersettings", params={"client": "emby"}).json()
        prefs["CustomPrefs"] = {"homesection0": "resume"}
        assert c.post("/DisplayPreferences/usersettings", params={"client": "emby"}, json=prefs).status_code == 204
        assert c.get("/DisplayPreferences/usersettings",
                      params={"client": "emby"}).json()["CustomPrefs"] == {"homesection0": "resume"}


def test_sign_ins_and_display_preferences_leave_the_library_content_as_it_was(server):
    """What only sign-ins and sessions read (devices and tokens, a user's sign-in dates, display
    preferences) is no content write: the kept counts, replies and the fragment store's epoch,
    which follow ``Database.content_generation``, stay valid. A policy change is content."""
    db = server.ctx.db
    with server.admin() as c:
        uid = c.post("/Users/New", json={"Name": "dora", "Password": "pw"}).json()["Id"]
        prefs = c.get("/DisplayPreferences/usersettings", params={"client": "emby"}).json()
    content = db.content_generation
    for device in ("tv", "phone", "tv"):
        with server.client(device=device) as c:
            r = c.post("/Users/AuthenticateByName", json={"Username": "dora", "Pw": "pw"})
            assert r.status_code == 200
        with server.client(r.json()["AccessToken"], device) as c:
            prefs["CustomPrefs"] = {"homesection0": device}
            assert c.post("/DisplayPreferences/usersettings", params={"client": "emby", "userId": uid},
                          json=prefs).status_code == 204
            assert c.get("/Users/Me").json()["LastLoginDate"]
    assert db.content_generation == content
    with server.admin() as c:
        policy = c.get(f"/Users/{uid}").json()["Policy"]
        assert c.post(f"/Users/{uid}/Policy", json={**policy, "EnableAllFolders": False}).status_code == 204
    assert db.content_generation > content


def test_policy_null_clears_a_nullable_field(server):
    """A policy POST with null for a nullable field clears it (Jellyfin: a null
    MaxParentalRating is no limit); a field left out keeps its stored value."""
    with server.admin() as c:
        uid = c.post("/Users/New", json={"Name": "nully"}).json()["Id"]
        set_to = {"MaxParentalRating": 10, "BlockedTags": ["gore"], "AllowedTags": ["family"],
                  "BlockUnratedItems": ["Movie"], "EnabledFolders": ["0123456789abcdef0123456789abcdef"], "EnabledChannels": ["0123456789abcdef0123456789abcdef"],
                  "EnabledDevices": ["d1"], "BlockedMediaFolders": ["0123456789abcdef0123456789abcdef"], "BlockedChannels": ["0123456789abcdef0123456789abcdef"],
                  "EnableContentDeletionFromFolders": ["0123456789abcdef0123456789abcdef"],
                  "AccessSchedules": [{"DayOfWeek": "Sunday", "StartHour": 1, "EndHour": 2}]}
        base = {"AuthenticationProviderId": "x", "PasswordResetProviderId": "y"}
        r = c.post(f"/Users/{uid}/Policy", json={**base, **set_to})
        assert r.status_code == 204, r.text
        policy = c.get(f"/Users/{uid}").json()["Policy"]
        assert policy["MaxParentalRating"] == 10 and policy["BlockedTags"] == ["gore"]
        # Left out: kept.
        assert c.post(f"/Users/{uid}/Policy", json={**base, "IsHidden": False}).status_code == 204
        policy = c.get(f"/Users/{uid}").json()["Policy"]
        assert policy["MaxParentalRating"] == 10 and policy["EnabledFolders"] != []
        # Null: cleared, one field at a time (no limit; an empty list).
        for field in set_to:
            assert c.post(f"/Users/{uid}/Policy", json={**base, field: None}).status_code == 204, field
            policy = c.get(f"/Users/{uid}").json()["Policy"]
            assert policy.get(field) in (None, []), (field, policy.get(field))
        assert policy.get("MaxParentalRating") is None and policy["IsHidden"] is False
