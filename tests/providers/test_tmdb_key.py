"""The TMDb API key: checked once with a test call before it is saved."""

from __future__ import annotations

from tests.metadata.fakes import TMDB_KEY, FakeTmdb, closed_port


def test_tmdb_key_is_checked_then_saved(shared_server):
    fake = FakeTmdb().start()
    try:
        with shared_server.admin() as c:
            assert c.post("/System/Configuration/tmdb", json={"BaseUrl": fake.url, "ApiKey": ""}).status_code == 204
            r = c.post("/Reelroom/Metadata/TmdbKey", json={"ApiKey": "wrong"})
            assert r.status_code == 400 and "did not accept this API key" in r.json()["detail"]
            assert c.get("/System/Configuration/tmdb").json()["ApiKey"] == ""
            r = c.post("/Reelroom/Metadata/TmdbKey", json={"ApiKey": f"  {TMDB_KEY} "})
            assert r.status_code == 200 and r.json() == {"Enabled": True}
            assert c.get("/System/Configuration/tmdb").json()["ApiKey"] == TMDB_KEY
            assert [q.query.get("api_key") for q in fake.requests if q.path == "/3/configuration"] == [
                "wrong", TMDB_KEY]
            assert c.post("/Reelroom/Metadata/TmdbKey", json={"ApiKey": 5}).status_code == 400
            assert c.post("/Reelroom/Metadata/TmdbKey", content=b"{").status_code == 400
            # TMDb down: the key is not saved, and the answer says it could not be checked
            c.post("/System/Configuration/tmdb", json={"BaseUrl": f"http://127.0.0.1:{closed_port()}", "ApiKey": TMDB_KEY})
            r = c.post("/Reelroom/Metadata/TmdbKey", json={"ApiKey": "another"})
            assert r.status_code == 503 and "could not be checked" in r.json()["detail"]
            assert c.get("/System/Configuration/tmdb").json()["ApiKey"] == TMDB_KEY
            # an empty key switches TMDb off
            assert c.post("/Reelroom/Metadata/TmdbKey", json={"ApiKey": ""}).json() == {"Enabled": False}
        with shared_server.client() as anon:
            assert anon.post("/Reelroom/Metadata/TmdbKey", json={"ApiKey": "x"}).status_code == 401
    finally:
        fake.stop()
