"""One writer: many concurrent writing requests never meet "database is locked"."""

from __future__ import annotations

import asyncio

import httpx


async def test_concurrent_writes_all_succeed(server):
    headers = {"X-Emby-Token": server.admin_token}
    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=60) as c:
        async def create(i: int) -> int:
            return (await c.post("/Users/New", json={"Name": f"user{i}"})).status_code

        async def prefs(i: int) -> int:
            return (await c.post(f"/DisplayPreferences/p{i}", params={"client": "emby"},
                                 json={"CustomPrefs": {"n": str(i)}})).status_code

        async def key(i: int) -> int:
            return (await c.post("/Auth/Keys", params={"app": f"app{i}"})).status_code

        results = await asyncio.gather(*[f(i) for i in range(25) for f in (create, prefs, key)])
        assert results.count(200) == 25 and results.count(204) == 50, results
        users = (await c.get("/Users")).json()
        assert len(users) == 26
        keys = (await c.get("/Auth/Keys")).json()["Items"]
        assert len(keys) == 25
