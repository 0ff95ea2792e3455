"""Start-up stays light: building the server (ServerContext and the ASGI app) imports none of the
heavy libraries, and starting on an up-to-date database does not import Alembic. They load when
first needed (probing, images, subtitles, tags, zeroconf, migrations).

Each check runs in a fresh interpreter, so what this test process imported does not count."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from tests.db.schema_helpers import migrate_to

ROOT = Path(__file__).resolve().parents[2]

HEAVY = ["av", "PIL", "alembic", "pysubs2", "mutagen", "blurhash_rs", "zeroconf",
         "httpx", "rich", "pygments", "watchfiles", "multiprocessing"]

BUILD = """
import asyncio, json, sys
from pathlib import Path
from server.context import ServerContext, ServerOptions
from server.app import create_app
import server.runner, app.server_main  # the headless entry point's own imports

async def main():
    ctx = ServerContext(ServerOptions(data_dir=Path(sys.argv[1]), port=0, enable_lan=False))
    create_app(ctx)
    built = sorted(m for m in sys.modules)
    if sys.argv[2] == "initialize":
        await ctx.initialize()
        assert ctx.startup.ready, ctx.startup.failed
    started = sorted(m for m in sys.modules)
    await ctx.close()
    print(json.dumps({"built": built, "started": started}))

asyncio.run(main())
"""


def _modules(data_dir: Path, phase: str) -> dict[str, set[str]]:
    out = subprocess.run([sys.executable, "-c", BUILD, str(data_dir), phase], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return {key: {m.split(".")[0] for m in names} for key, names in result.items()} | {
        f"{key} (full)": set(names) for key, names in result.items()}


def test_building_the_server_imports_no_heavy_library(tmp_path):
    modules = _modules(tmp_path, "build")
    loaded = modules["built"]
    assert sorted(set(HEAVY) & loaded) == []
    # Litestar's pydantic plugins are left out (server/app.py): they imported pydantic.v1
    assert "pydantic.v1" not in modules["built (full)"]


def _database_behind_the_scripts(data_dir: Path) -> None:
    """The data folder's database at an older revision (an upgrade of Reelroom)."""
    from server.paths import ServerPaths

    migrate_to(ServerPaths(data_dir).database_file, "0007_merge")


def test_starting_on_an_up_to_date_database_does_not_import_alembic(tmp_path):
    new = _modules(tmp_path / "new", "initialize")  # an empty data folder: made from the head schema
    assert "alembic" not in new["started"]
    _database_behind_the_scripts(tmp_path / "old")
    first = _modules(tmp_path / "old", "initialize")  # behind the scripts: the migration is due
    assert "alembic" in first["started"]
    again = _modules(tmp_path / "old", "initialize")
    assert "alembic" not in again["started"]
    assert sorted(set(HEAVY) & again["built"]) == []


DEFERRED = """
import json, sys
import server.runner, app.server_main  # the headless entry point's imports
from server.app import create_app
from server.lazy_modules import loaded
from uvicorn.config import Config as UvicornConfig
# what uvicorn does at each start (its lifespan module takes Config from the package)
UvicornConfig(lambda *a: None, lifespan="on", log_config=None).load()
import uvicorn.lifespan.on
state = {name: name not in sys.modules or not loaded(sys.modules[name]) for name in ("yaml", "pdb", "uvicorn", "logging.config")}
state["no socketserver"] = "socketserver" not in sys.modules
state["no click"] = "click" not in sys.modules and "watchfiles" not in sys.modules
# each works as always when used
import uvicorn, yaml, pdb, logging.config
from uvicorn import Config
logging.config.dictConfig({"version": 1, "incremental": True, "loggers": {"reelroom.lazy.test": {"level": "WARNING"}}})
works = {"uvicorn": [uvicorn.run.__module__, uvicorn.Server.__name__, Config.__name__, bool(uvicorn.__version__)],
         "yaml": yaml.safe_load(yaml.safe_dump({"a": [1, 2]})), "pdb": pdb.Pdb.__name__,
         "loaded": [loaded(uvicorn), loaded(yaml), loaded(pdb), loaded(logging.config)], "click": "click" in sys.modules,
         "logging.config": [logging.getLogger("reelroom.lazy.test").level, logging.config.fileConfig.__name__]}
print(json.dumps({"deferred": state, "works": works}))
"""


def test_rarely_used_library_modules_load_on_first_use():
    """server/lazy_modules.py: yaml, pdb, logging.config and uvicorn's package __init__ (its command line: click,
    watchfiles) do not run while the server is built; each works when first used."""
    out = subprocess.run([sys.executable, "-c", DEFERRED], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["deferred"] == {"yaml": True, "pdb": True, "uvicorn": True, "logging.config": True, "no click": True,
                                  "no socketserver": True}
    assert result["works"] == {"uvicorn": ["uvicorn.main", "Server", "Config", True], "yaml": {"a": [1, 2]},
                               "pdb": "Pdb", "loaded": [True, True, True, True], "click": True,
                               "logging.config": [30, "fileConfig"]}


XML = """
import asyncio, json, sys
from pathlib import Path
from server.context import ServerContext, ServerOptions
from server.app import create_app

async def main():
    ctx = ServerContext(ServerOptions(data_dir=Path(sys.argv[1]), port=0, enable_lan=False))
    create_app(ctx)
    await ctx.initialize()
    programmes = await ctx.livetv.refresh_guide()  # the start-up task's refresh, with no provider
    idle = sorted(m for m in sys.modules if m.split(".")[0] in ("xml", "defusedxml"))
    from server.library.scan.nfo import parse_nfo_bytes
    from server.livetv.guide import parse_xmltv
    nfo = parse_nfo_bytes(b"<movie><title>Alien</title><year>1979</year></movie>")
    xmltv = parse_xmltv(b'<tv><channel id="c1"><display-name>One</display-name></channel></tv>')
    await ctx.close()
    print(json.dumps({"programmes": programmes, "guide": len(ctx.livetv.guide.programs), "idle": idle,
                      "nfo": [nfo.title, nfo.year], "xmltv": [c.id for c in xmltv[0]]}))

asyncio.run(main())
"""


def test_xml_parsers_load_with_the_first_nfo_or_listings_not_at_start(tmp_path):
    """server/library/scan/nfo.py and server/livetv import ElementTree where they parse: a server
    with no NFO and no listings provider (the guide refresh of an empty guide parses nothing)
    never loads them; both parse as before when used."""
    out = subprocess.run([sys.executable, "-c", XML, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"programmes": 0, "guide": 0, "idle": [], "nfo": ["Alien", 1979], "xmltv": ["c1"]}


# A real server (the runner the entry point uses, on a thread) on the data folder argv[1], ready.
SERVE = """
import json, socket, sys, threading, time
from pathlib import Path
from server.context import ServerOptions
from server.runner import ServerRunner

def ask(port, head):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(head)
        return s.recv(65536).split(b"\\r\\n", 1)[0].decode()

runner = ServerRunner(ServerOptions(data_dir=Path(sys.argv[1]), port=0, host="127.0.0.1", enable_lan=False))
thread = threading.Thread(target=runner.serve, daemon=True)
thread.start()
assert runner.ready.wait(120)
"""

IDLE = SERVE + """
info = ask(runner.port, b"GET /System/Info/Public HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
idle = sorted(m for m in ("websockets", "anyio._backends._asyncio") if m in sys.modules)
refused = ask(runner.port, b"GET /socket HTTP/1.1\\r\\nHost: x\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
                           b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\nSec-WebSocket-Version: 13\\r\\n\\r\\n")
after = "websockets" in sys.modules
runner.request_shutdown()
thread.join(30)
print(json.dumps({"info": info, "idle": idle, "refused": refused, "after": after, "stopped": not thread.is_alive()}))
"""


def _scanned_movie(tmp_path: Path, name: str, seconds: int) -> Path:
    """A data folder whose server (stopped again) scanned one movie, ``name``, with no artwork."""
    from tests.conftest import complete_wizard, start_server, stop_server
    from tests.library_helpers import add_library_and_scan
    from tests.mediagen import make_video

    movie = tmp_path / "media" / "movies" / name
    movie.mkdir(parents=True)
    make_video(movie / f"{name}.mkv", seconds=seconds)
    data = tmp_path / "data"
    live = start_server(data)
    try:
        complete_wizard(live)
        add_library_and_scan(live, "Movies", "movies", [tmp_path / "media" / "movies"], realtime=False)
    finally:
        stop_server(live)
    return data


def _run_served(script: str, data_dir: Path) -> dict:
    """Run ``script`` (a served start, see SERVE) in a fresh interpreter; its last line of JSON."""
    out = subprocess.run([sys.executable, "-c", script, str(data_dir)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_served_idle_server_has_no_websocket_protocol_or_anyio_backend(tmp_path):
    """server/runner.py imports uvicorn's WebSocket protocol (and the websockets package) at the first
    upgrade, and server/app.py's event emitter starts no anyio task group without listeners: a real
    server that answered a request has neither; the first socket handshake works as before."""
    result = _run_served(IDLE, tmp_path)
    assert result["info"] == "HTTP/1.1 200 OK"
    assert result["idle"] == []
    assert result["refused"] == "HTTP/1.1 403 Forbidden"  # no token: refused by the socket's handler
    assert result["after"] is True
    assert result["stopped"] is True


async def test_the_quiet_event_emitter_runs_listeners_like_litestars():
    from litestar.events import listener

    from server.app import _QuietEmitter

    seen: list[str] = []

    @listener("played")
    async def on_played(name: str) -> None:
        seen.append(name)

    async with _QuietEmitter(listeners=[]) as quiet:
        quiet.emit("played", "nobody listens")  # nothing to run, nothing started
        assert quiet._exit_stack is None
    async with _QuietEmitter(listeners=[on_played]) as emitter:
        emitter.emit("played", "Alien")
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.01)
    assert seen == ["Alien"]


SERVED = SERVE + """
info = ask(runner.port, b"GET /System/Info/Public HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
at_200 = sorted(sys.modules)
tasks = runner.ctx.tasks
deadline = time.monotonic() + 60  # the start-up tasks (scan, artwork, guide, ...) run to their end
while any(t.State == "Running" for t in tasks.infos()) and time.monotonic() < deadline:
    time.sleep(0.05)
idle = sorted(sys.modules)
runner.request_shutdown()
thread.join(30)
print(json.dumps({"info": info, "at_200": at_200, "idle": idle, "stopped": not thread.is_alive()}))
"""

# Modules of the scan's resolver (Jellyfin's naming rules for episodes, movies and music, the
# stream languages): they load with the first scan of a library, never at the start of a server.
RESOLVER = ["server.library.scan.resolve", "server.library.scan.naming.episodes", "server.library.scan.naming.movies",
            "server.library.scan.naming.music", "server.library.scan.naming.cleaning",
            "server.library.scan.naming.subtitles", "server.media.streams", "server.library.scan.nfo"]
# The built-in remote providers (server/plugins/builtin.py): built, their modules imported, the
# first time a service asks for their kind (a metadata or image search, subtitles, lyrics).
PROVIDERS = ["server.metadata.providers.tmdb", "server.metadata.providers.musicbrainz",
             "server.metadata.providers.tvmaze", "server.metadata.providers.fanart", "server.subtitles.opensubtitles",
             "server.subtitles.lrclib"]
# HLS transcoding's job manager (server/playback/hls_service.py): with the first transcode.
TRANSCODING = ["server.playback.transcode_jobs"]
# The browsing parts (ctx.browse: play state, TV, playlists, collections, related lists, editing):
# each with the first request that asks for it (server/library/browse/service.py).
BROWSING = ["server.library.browse.playstate", "server.library.browse.tv", "server.library.browse.playlists",
            "server.library.browse.boxsets", "server.library.browse.related", "server.library.browse.editing"]


def test_a_served_start_and_its_tasks_import_no_heavy_library_nor_the_resolver_or_providers(tmp_path):
    """The real entry point's runner, up to its first 200 and until the start-up tasks have run
    on an empty data folder: none of the heavy libraries, the scan's resolver (with the NFO reader),
    the remote providers, the HLS job manager or the browsing parts is imported (tests/library/scan, tests/providers and
    tests/playback use them)."""
    result = _run_served(SERVED, tmp_path)
    assert result["info"] == "HTTP/1.1 200 OK"
    assert result["stopped"] is True
    for phase in ("at_200", "idle"):
        loaded = set(result[phase])
        assert sorted({m.split(".")[0] for m in loaded} & set(HEAVY)) == [], phase
        assert sorted(loaded & set(RESOLVER + PROVIDERS + TRANSCODING + BROWSING)) == [], phase


def test_a_reader_process_imports_no_orm():
    """A reader process (server/readers/worker.py) builds Items pages on the Core tables: its imports
    leave out SQLModel, pydantic, the ORM classes (~0.4 s of the ~0.85 s a reader took to import) and
    SQLAlchemy's ORM."""
    script = ("import json, sys\nimport server.readers.worker\n"
              f"print(json.dumps(sorted(m for m in {ORM_MODULES!r} if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_the_naming_package_loads_each_name_with_its_own_module():
    """server/library/scan/naming/__init__.py: importing the package (or one submodule) loads no
    other submodule; every exported name is there on first use, the very object its module defines."""
    script = """
import importlib, json, sys
import server.library.scan.naming as naming
import server.library.scan.naming.images
before = sorted(m for m in sys.modules if m.startswith("server.library.scan.naming."))
same = all(getattr(naming, name) is getattr(importlib.import_module("server.library.scan.naming." + naming._SOURCES[name]),
                                            name) for name in naming.__all__)
from server.library.scan.naming import parse_episode
try:
    naming.no_such_name
    missing = False
except AttributeError:
    missing = True
print(json.dumps({"before": before, "same": same, "all": sorted(naming.__all__) == sorted(naming._SOURCES),
                  "dir": set(naming.__all__) <= set(dir(naming)), "missing": missing,
                  "episode": parse_episode("/tv/Show/Season 1/Show S01E02.mkv").episode}))
"""
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["before"] == ["server.library.scan.naming.extensions", "server.library.scan.naming.images",
                                "server.library.scan.naming.kinds"]
    assert result["same"] is True and result["all"] is True and result["dir"] is True and result["missing"] is True
    assert result["episode"] == 2


# SQLModel, pydantic, the ORM classes (server/db/tables.py) and SQLAlchemy's ORM: a served start,
# its tasks and an idle server work on the Core tables of server/db/schema.py, their reads and
# writes on server/db/database.py's CoreSession (~0.25 s and ~8 MiB less at start, and the ORM's
# ~0.26 G instructions).
ORM_MODULES = ["sqlmodel", "pydantic", "pydantic_core", "server.db.tables", "sqlalchemy.orm"]

MAPPERS = SERVE + f"ORM_MODULES = {ORM_MODULES!r}\n" + """
info = ask(runner.port, b"GET /System/Info/Public HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
tasks = runner.ctx.tasks
deadline = time.monotonic() + 60  # the start-up tasks (scan, artwork, guide, ...) run to their end
while any(t.State == "Running" for t in tasks.infos()) and time.monotonic() < deadline:
    time.sleep(0.05)
time.sleep(1)  # the recorder's first look at its timers (just after ready) is done by now
orm_loaded = sorted(m for m in ORM_MODULES if m in sys.modules)
from sqlalchemy import select
from sqlmodel import SQLModel
from server.db import schema
from server.db.tables import TaskResult
registry = SQLModel._sa_registry
idle = sorted(m.class_.__name__ for m in registry.mappers if m.configured)
with runner.ctx.db.session() as s:  # the first use of the ORM configures the mappers, as before
    results = {r.task_key: r.last_result_json is not None for r in s.scalars(select(TaskResult))}
after = all(m.configured for m in registry.mappers)
same_table = TaskResult.__table__ is schema.task_results
runner.request_shutdown()
thread.join(30)
print(json.dumps({"info": info, "orm_loaded": orm_loaded, "idle": idle, "results": results, "after": after,
                  "same_table": same_table, "stopped": not thread.is_alive()}))
"""


def test_a_served_start_and_its_tasks_leave_the_orm_unloaded(tmp_path):
    """The start, its tasks (scan, artwork, guide, the task results they write) and the recorder's
    look at its timers read and write on the Core tables, so neither SQLModel, pydantic nor the ORM
    classes are imported, and SQLAlchemy configures no ORM mapper (~1.3 MiB, ~17 ms) in a server
    nobody has used yet; the first use of the ORM imports and configures them, on the same tables,
    and reads what the tasks wrote."""
    result = _run_served(MAPPERS, tmp_path)
    assert result["info"] == "HTTP/1.1 200 OK"
    assert result["orm_loaded"] == []
    assert result["idle"] == []
    assert result["same_table"] is True
    assert result["after"] is True
    # each task that ran at start saved its result (an insert; a later run updates the row)
    assert result["results"] and all(result["results"].values()), result["results"]
    assert result["stopped"] is True


ARTWORK_FRAME = SERVE + f"ORM_MODULES = {ORM_MODULES!r}\n" + """
artwork = runner.ctx.artwork
deadline = time.monotonic() + 120  # the start-up artwork run grabs the movie's frame and stores it
while (artwork.runs == 0 or artwork.pending) and time.monotonic() < deadline:
    time.sleep(0.05)
orm_loaded = sorted(m for m in ORM_MODULES if m in sys.modules)
frames = artwork.last.frames
runner.request_shutdown()
thread.join(30)
print(json.dumps({"runs": artwork.runs, "frames": frames, "orm_loaded": orm_loaded, "stopped": not thread.is_alive()}))
"""


def test_an_artwork_run_that_stores_a_frame_leaves_the_orm_unloaded(tmp_path):
    """The artwork run's writes (a grabbed frame stored on its item, a generated Primary dropped, an
    artist's or genre's image) are Core statements: a run at start that grabs a movie's frame loads
    no SQLModel, pydantic nor ORM classes (~14-20 MiB for the process's life). On main its store
    took the ``Item`` ORM class, and the home-screen test above met it now and then."""
    import sqlite3

    data = _scanned_movie(tmp_path, "Beta (2002)", seconds=2)
    # whatever the first server's run did, the next start's run has a frame to grab and store
    with sqlite3.connect(data / "data" / "reelroom.db") as db:
        assert db.execute("UPDATE items SET images_json = '[]' WHERE type = 'Movie'").rowcount == 1
    result = _run_served(ARTWORK_FRAME, data)
    assert result["runs"] >= 1 and result["frames"] == 1, result
    assert result["orm_loaded"] == []
    assert result["stopped"] is True


ROUTE_INFOS = SERVE + """
wire = runner._server.config.app.app  # the web host's app: the wire middleware
made_infos = lambda: getattr(wire.routes, "_infos", wire.routes)  # a plain dict: every route's info
at_ready = len(made_infos())
info = ask(runner.port, b"GET /System/Info/Public HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
items = ask(runner.port, b"GET /items?StartIndex=abc HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
time.sleep(2)  # the start-up tasks run meanwhile: they make no request
made = sorted(made_infos())
routes = len(wire.routes)
from server.http.wire_middleware import _route_info
operations = getattr(wire.routes, "_operations", {})
same = all(wire.routes[key] == _route_info(op) for key, op in operations.items())
runner.request_shutdown()
thread.join(30)
print(json.dumps({"at_ready": at_ready, "info": info, "items": items, "made": made, "routes": routes, "same": same,
                  "stopped": not thread.is_alive()}))
"""


def test_a_served_start_makes_the_wire_route_infos_of_the_routes_asked_only(tmp_path):
    """server/http/wire_middleware.py ``_RouteTable``: a route's RouteInfo (its query names, path
    kinds and body struct: ~0.44 MiB for all ~725 path and method pairs) is made on the route's first request, not
    at start; the routes asked answer as before, and every info made later is the one the route's
    operation gives."""
    result = _run_served(ROUTE_INFOS, tmp_path)
    assert result["at_ready"] == 0
    assert result["info"] == "HTTP/1.1 200 OK"
    assert result["items"] == "HTTP/1.1 401 Unauthorized"  # matched case-insensitively; no token
    assert result["made"] == [["/Items", "GET"], ["/System/Info/Public", "GET"]]
    assert result["routes"] > 700  # 382 operations, and the OPTIONS of each path
    assert result["same"] is True
    assert result["stopped"] is True


# Where the ORM is imported first: a hook notes the thread of each first import, before the server's.
FIRST_ORM = """
import importlib.abc, sys, threading
WATCH = {"sqlalchemy.orm", "sqlmodel", "server.db.tables"}
first = {}
class Note(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in WATCH and name not in first:
            first[name] = threading.current_thread().name
        return None
sys.meta_path.insert(0, Note())
""" + SERVE + """
import httpx
loop_thread = thread.name  # the runner's thread runs the event loop
at_200 = ask(runner.port, b"GET /System/Info/Public HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
before = sorted(first)
header = 'MediaBrowser Client="t", Device="t", DeviceId="first-orm", Version="1"'
with httpx.Client(base_url=f"http://127.0.0.1:{runner.port}", headers={"Authorization": header}, timeout=60) as c:
    codes = [c.post("/Startup/User", json={"Name": "admin", "Password": "pw"}).status_code,
             c.post("/Startup/Complete").status_code]
    signed = c.post("/Users/AuthenticateByName", json={"Username": "admin", "Pw": "pw"})
    codes.append(signed.status_code)
    c.headers["Authorization"] = header + f', Token="{signed.json()["AccessToken"]}"'
    codes.append(c.get("/Users/Me").status_code)
    signed_in = sorted(first)  # the wizard, a sign-in and a token's use: on the Core tables
    codes.append(c.get("/LiveTv/Recordings").status_code)  # (a service still on the ORM classes)
runner.request_shutdown()
thread.join(30)
print(json.dumps({"at_200": at_200, "before": before, "codes": codes, "first": first, "signed_in": signed_in,
                  "on_loop": sorted(m for m, t in first.items() if t == loop_thread)}))
"""


def test_the_first_use_of_the_orm_imports_it_off_the_event_loop(tmp_path):
    """A served start imports none of SQLAlchemy's ORM, SQLModel or the ORM classes, nor do the
    wizard, a sign-in and a request with its token (on the Core tables); the first request of a
    service still on the ORM classes (the recordings) imports them on a thread (its ``await
    load_orm_classes()``), never on the event loop, where ~0.3 s of imports would hold every other
    request; the requests answer as before."""
    result = _run_served(FIRST_ORM, tmp_path)
    assert result["at_200"] == "HTTP/1.1 200 OK"
    assert result["before"] == []
    assert result["signed_in"] == []
    assert result["codes"] == [204, 204, 200, 200, 200]
    assert sorted(result["first"]) == ["server.db.tables", "sqlalchemy.orm", "sqlmodel"]
    assert result["on_loop"] == []


PUBLIC_USERS = FIRST_ORM.replace("""with httpx.Client""", """with httpx.Client(base_url=f"http://127.0.0.1:{runner.port}", timeout=60) as c:
    public = c.get("/Users/Public").status_code
with httpx.Client""")


def test_an_anonymous_first_request_that_reads_users_loads_no_orm(tmp_path):
    """GET /Users/Public (anonymous, the first request) reads the users on the Core table: nothing of
    the ORM is imported until a service that uses it is asked (off the loop)."""
    result = _run_served(PUBLIC_USERS, tmp_path)
    assert result["codes"] == [204, 204, 200, 200, 200]
    assert result["signed_in"] == []
    assert result["on_loop"] == []
    assert sorted(result["first"]) == ["server.db.tables", "sqlalchemy.orm", "sqlmodel"]


def test_a_served_start_on_an_unchanged_library_imports_no_orm_resolver_or_pillow(tmp_path):
    """Every restart of a real server scans its libraries; when no file changed (the usual case),
    that scan ends before the resolver and the ORM classes (SQLModel, pydantic), and the views'
    collages, made by the last run, are not made again (no Pillow): they stayed loaded for the
    process's life, ~24 MiB of an idle server's RSS at 100k items (65 MiB empty, 89 with them)."""
    from tests.conftest import complete_wizard, start_server, stop_server
    from tests.library_helpers import add_library_and_scan, wait_for_artwork
    from tests.mediagen import make_image, make_video

    movie = tmp_path / "media" / "movies" / "Alpha (2001)"
    movie.mkdir(parents=True)
    make_video(movie / "Alpha (2001).mkv", seconds=1)
    make_image(movie / "poster.jpg")
    data = tmp_path / "data"
    live = start_server(data)
    try:
        complete_wizard(live)
        add_library_and_scan(live, "Movies", "movies", [tmp_path / "media" / "movies"], realtime=False)
        wait_for_artwork(live)
    finally:
        stop_server(live)
    result = _run_served(SERVED, data)
    assert result["info"] == "HTTP/1.1 200 OK"
    assert result["stopped"] is True
    for phase in ("at_200", "idle"):
        loaded = set(result[phase])
        assert sorted({m.split(".")[0] for m in loaded} & set(HEAVY)) == [], phase
        assert sorted(loaded & set(RESOLVER + ORM_MODULES)) == [], phase


def test_a_collage_whose_sources_are_all_gone_imports_no_pillow(tmp_path):
    script = f"""
import json, sys
from pathlib import Path
from server.artwork import collage
from server.media.images import ImageDecodeError
try:
    collage.make_collage(["{tmp_path}/gone-1.jpg", "{tmp_path}/gone-2.jpg"], collage.THUMB,
                         Path("{tmp_path}/out.jpg"))
    raised = False
except ImageDecodeError:
    raised = True
print(json.dumps({{"raised": raised, "pillow": "PIL" in sys.modules}}))
"""
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"raised": True, "pillow": False}


DESKTOP_KEY = FIRST_ORM.replace("""import httpx
loop_thread""", """import asyncio, httpx
tokens = runner.ctx.tokens

async def ensure():  # what the desktop app asks at each start (app/server_host.py), on the loop
    return await tokens.key_named("Reelroom Desktop") or await tokens.create_key("Reelroom Desktop")

made = asyncio.run_coroutine_threadsafe(ensure(), runner.loop).result(30)
again = asyncio.run_coroutine_threadsafe(ensure(), runner.loop).result(30)
print(json.dumps({"made": made, "again": again, "orm": sorted(first)}))
loop_thread""").replace("""    codes.append(c.get("/Users/Me").status_code)
""", """    codes.append(c.get("/Users/Me").status_code)
    codes.append(c.get("/System/Info", headers={"Authorization": f'MediaBrowser Token="{made}"'}).status_code)
""")


def test_the_desktop_apps_key_is_made_and_found_without_the_orm(tmp_path):
    """The desktop app's API key is looked up (and made, the first time) on the event loop at each
    start: on the Core table, so no ORM import holds the loop; the key is found again, and works
    as a token afterwards, with no ORM either."""
    out = subprocess.run([sys.executable, "-c", DESKTOP_KEY, str(tmp_path)], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [json.loads(line) for line in out.stdout.strip().splitlines() if line.startswith("{")]
    key, result = lines[0], lines[-1]
    assert len(key["made"]) == 32 and key["again"] == key["made"]
    assert key["orm"] == []
    # GET /System/Info with the desktop key (the tray's requests: no ORM), then the recordings
    assert result["codes"] == [204, 204, 200, 200, 200, 200]
    assert result["signed_in"] == []
    assert result["on_loop"] == []


# A signed-in client's home screen, a browse and a play (what jellyfin-web asks), on a real server.
HOME_SCREEN = SERVE + f"ORM_MODULES = {ORM_MODULES!r}\n" + """
import httpx
header = 'MediaBrowser Client="Jellyfin Web", Device="Firefox", DeviceId="home-screen", Version="10.10.0"'
codes = {}
with httpx.Client(base_url=f"http://127.0.0.1:{runner.port}", headers={"Authorization": header}, timeout=60) as c:
    def ask(method, path, **kw):
        r = c.request(method, path, **kw)
        codes[f"{method} {path.split('?')[0]}"] = r.status_code
        return r
    signed = ask("POST", "/Users/AuthenticateByName", json={"Username": "admin", "Pw": "s3cret!"}).json()
    token = signed["AccessToken"]
    c.headers["Authorization"] = header + f', Token="{token}"'
    uid = signed["User"]["Id"]
    ask("GET", "/Users/Me")
    ask("GET", f"/Users/{uid}")
    ask("GET", f"/DisplayPreferences/usersettings?userId={uid}&client=emby")
    ask("POST", f"/DisplayPreferences/usersettings?userId={uid}&client=emby", json={
        "Id": "usersettings", "Client": "emby", "SortBy": "SortName", "CustomPrefs": {"homesection0": "smalllibrarytiles"},
        "RememberIndexing": False, "PrimaryImageHeight": 250, "PrimaryImageWidth": 250, "ScrollDirection": "Horizontal",
        "ShowBackdrop": True, "RememberSorting": False, "SortOrder": "Ascending", "ShowSidebar": False})
    views = ask("GET", f"/UserViews?userId={uid}").json()["Items"]
    ask("GET", f"/UserItems/Resume?userId={uid}&Limit=12&MediaTypes=Video")
    ask("GET", f"/Items/Latest?userId={uid}&Limit=16&ParentId={views[0]['Id']}")
    ask("GET", f"/Shows/NextUp?userId={uid}&Limit=24")
    ask("POST", "/Sessions/Capabilities/Full", json={"PlayableMediaTypes": ["Video"], "SupportedCommands": [],
                                                     "SupportsMediaControl": True})
    ask("GET", "/System/Info")
    items = ask("GET", f"/Items?userId={uid}&ParentId={views[0]['Id']}&Recursive=true&IncludeItemTypes=Movie").json()
    item = items["Items"][0]["Id"]
    ask("GET", f"/Users/{uid}/Items/{item}")
    ask("POST", f"/Items/{item}/PlaybackInfo?userId={uid}", json={"UserId": uid})
    state = {"ItemId": item, "PlaySessionId": "p", "PositionTicks": 0, "CanSeek": True, "PlayMethod": "DirectPlay"}
    ask("POST", "/Sessions/Playing", json=state)
    ask("POST", "/Sessions/Playing/Progress", json={**state, "PositionTicks": 5_000_000})
    ask("POST", "/Sessions/Playing/Stopped", json={**state, "PositionTicks": 6_000_000})
    ask("POST", f"/UserFavoriteItems/{item}?userId={uid}")
    ask("POST", f"/UserPlayedItems/{item}?userId={uid}")
    ask("GET", "/Devices")
    ask("GET", "/System/ActivityLog/Entries?limit=5")
    ask("POST", "/Sessions/Logout")
loaded = sorted(m for m in ORM_MODULES if m in sys.modules)
runner.request_shutdown()
thread.join(30)
print(json.dumps({"codes": codes, "loaded": loaded, "stopped": not thread.is_alive()}))
"""


def test_a_signed_in_home_screen_browse_and_play_load_no_orm(tmp_path):
    """A sign-in, the home screen's requests (user, display preferences, views, resume, latest, next
    up, capabilities, system info), an Items page, an item, its PlaybackInfo, a play's start,
    progress and stop, a favourite, a played mark, the devices, the activity log and a sign-out run
    on the Core tables: SQLModel, pydantic and the ORM classes (~14-20 MiB for the process's life)
    are not imported. (On main the guard loaded them before the first request with a token.)"""
    data = _scanned_movie(tmp_path, "Alpha (2001)", seconds=1)
    result = _run_served(HOME_SCREEN, data)
    assert result["stopped"] is True
    failed = {request: code for request, code in result["codes"].items() if code >= 300}
    assert failed == {}
    assert len(result["codes"]) == 22
    assert [m for m in result["loaded"] if m in ("server.db.tables", "sqlmodel", "pydantic", "pydantic_core")] == []


PASSWORDS = """
import asyncio, json, sys, threading
from pathlib import Path

class Seen:  # which thread first looks for argon2
    threads = []
    def find_spec(self, name, path=None, target=None):
        if name == "argon2":
            self.threads.append(threading.current_thread().name)
        return None

sys.meta_path.insert(0, Seen())
from server.context import ServerContext, ServerOptions
from server.app import create_app
import server.runner, app.server_main
from server.users import passwords

ctx = ServerContext(ServerOptions(data_dir=Path(sys.argv[1]), port=0, enable_lan=False))
create_app(ctx)
built = "argon2" in sys.modules or "_cffi_backend" in sys.modules

async def main():
    stored = await passwords.hash_password_async("secret")
    return [stored.startswith("$argon2id$"), await passwords.verify_password_async(stored, "secret"),
            await passwords.verify_password_async(stored, "wrong"),
            await passwords.verify_password_async("not a hash", "secret")]

answers = asyncio.run(main())
ctx.db.close()
print(json.dumps({"built": built, "answers": answers, "threads": Seen.threads}))
"""


def test_argon2_loads_with_the_first_password_work_on_the_password_pool(tmp_path):
    out = subprocess.run([sys.executable, "-c", PASSWORDS, str(tmp_path)], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["built"] is False  # a built server has not imported argon2-cffi (nor cffi)
    assert result["answers"] == [True, True, False, False]
    assert result["threads"] and all(t.startswith("reelroom-password") for t in result["threads"])
