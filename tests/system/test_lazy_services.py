"""Domain services a plain start does not need are built on first use (server/context.py, "services
built on first use"): a started server has not imported their modules nor made them, and each works
the first time a request asks for it.

The import check runs in a fresh interpreter, so what this test process imported does not count."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx

from tests.conftest import auth_header

ROOT = Path(__file__).resolve().parents[2]

#: ctx attribute -> the module its service lives in (imported only when the service is built)
LAZY = {
    "syncplay": "server.syncplay.groups",
    "quick_connect": "server.users.quick_connect",
    "packages": "server.plugins.packages",
    "metadata": "server.metadata.service",
    "versions": "server.playback.versions",
    "remote_text": "server.subtitles.remote",
}
#: ctx.browse part -> its module (server/library/browse/service.py: each part is built on first use)
BROWSE = {
    "playstate": "server.library.browse.playstate",
    "tv": "server.library.browse.tv",
    "playlists": "server.library.browse.playlists",
    "collections": "server.library.browse.boxsets",
    "related": "server.library.browse.related",
    "editing": "server.library.browse.editing",
}

START = """
import asyncio, json, sys
from pathlib import Path
from server.context import ServerContext, ServerOptions
from server.app import create_app
import server.runner, app.server_main  # the headless entry point's own imports

LAZY = json.loads(sys.argv[2])
BROWSE = json.loads(sys.argv[3])

async def main():
    ctx = ServerContext(ServerOptions(data_dir=Path(sys.argv[1]), port=0, enable_lan=False))
    create_app(ctx)
    await ctx.initialize()
    assert ctx.startup.ready, ctx.startup.failed
    await asyncio.sleep(0.5)  # start-up tasks run in the background
    idle = {name: [module in sys.modules, name in vars(ctx)] for name, module in LAZY.items()}
    idle_browse = {name: [module in sys.modules, name in vars(ctx.browse)] for name, module in BROWSE.items()}
    ctx._leave_syncplay("some-device")  # a session ending with no SyncPlay manager leaves it unbuilt
    unbuilt_after_leave = "syncplay" not in vars(ctx)
    used = {}
    for name, module in LAZY.items():
        service = getattr(ctx, name)
        used[name] = [module in sys.modules, type(service).__module__ == module, getattr(ctx, name) is service]
    used_browse = {}
    for name, module in BROWSE.items():
        part = getattr(ctx.browse, name)
        used_browse[name] = [module in sys.modules, type(part).__module__ == module, getattr(ctx.browse, name) is part]
    await ctx.close()
    print(json.dumps({"idle": idle, "unbuilt_after_leave": unbuilt_after_leave, "used": used,
                      "idle_browse": idle_browse, "used_browse": used_browse}))

asyncio.run(main())
"""


def test_a_plain_start_builds_and_imports_no_lazy_service(tmp_path):
    for _ in range(2):  # the first start migrates a new database; the second is a plain restart
        out = subprocess.run([sys.executable, "-c", START, str(tmp_path), json.dumps(LAZY),
                              json.dumps(BROWSE)], cwd=ROOT,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        result = json.loads(out.stdout.strip().splitlines()[-1])
        assert result["idle"] == {name: [False, False] for name in LAZY}
        assert result["unbuilt_after_leave"] is True
        # built once, from its module, on first use, and the same object afterwards
        assert result["used"] == {name: [True, True, True] for name in LAZY}
        assert result["idle_browse"] == {name: [False, False] for name in BROWSE}
        assert result["used_browse"] == {name: [True, True, True] for name in BROWSE}


def test_lazy_services_work_on_first_use_over_http(server):
    ctx = server.ctx
    headers = auth_header(server.admin_token)
    with httpx.Client(base_url=server.url, headers=headers, timeout=30) as client:
        assert "quick_connect" not in vars(ctx)
        r = client.get("/QuickConnect/Enabled")
        assert r.status_code == 200 and r.json() in (True, False)
        assert "quick_connect" in vars(ctx)

        assert "syncplay" not in vars(ctx)
        r = client.get("/SyncPlay/List")
        assert r.status_code == 200 and r.json() == []
        r = client.post("/SyncPlay/New", json={"GroupName": "Movie night"})
        assert r.status_code == 204, r.text
        groups = client.get("/SyncPlay/List").json()
        assert [g["GroupName"] for g in groups] == ["Movie night"]
        assert "syncplay" in vars(ctx)

        assert "metadata" not in vars(ctx)
        r = client.get("/Libraries/AvailableOptions", params={"libraryContentType": "movies"})
        assert r.status_code == 200, r.text
        movie = next(t for t in r.json()["TypeOptions"] if t["Type"] == "Movie")
        assert movie["MetadataFetchers"]  # the providers the metadata service lists (TMDb, ...)
        assert "metadata" in vars(ctx)

        assert "tv" not in vars(ctx.browse)
        r = client.get("/Shows/NextUp", params={"userId": server.admin_id})
        assert r.status_code == 200, r.text
        assert r.json()["Items"] == [] and r.json()["TotalRecordCount"] == 0
        assert "tv" in vars(ctx.browse)
