"""Where the idle server's resident memory goes, side by side with a baseline checkout.

For each tree it starts ``reelroom-server`` (this interpreter, the tree on PYTHONPATH, bytecode
compiled first) on a data folder (an empty one, or a copy of ``--data``), waits ``--idle`` seconds
after its first 200 and reads, inside the server: RSS (anonymous / file-backed) and its peak, Python's small-object
allocator (pymalloc: arenas and the bytes in live blocks), glibc's heap (in use / free, mmapped),
the threads and the modules loaded, SQLite's own memory (its page caches: the trimmer empties them
once the database has been left alone for a look, 10-20 s after the start's work, so pass
``--idle 30`` to see the idle server rather than the start's last reads). A second start with the dummy password hash left out
(``warm_up_soon``) shows what the start's peak is made of. Then, in fresh interpreters, what the
imports of the big libraries cost in anonymous RSS (each with what it imports itself).

With ``--use`` the server is used before it idles: the bench runs the startup wizard (on a data
folder without a user; a kept library's user is ``bench``), signs in with ``AuthenticateByName``
and asks what jellyfin-web asks on its home screen and one browse (the user, display
preferences, views, resume, latest, next up, capabilities, system info, an Items page, an item,
its PlaybackInfo, a play start, progress and stop, a sign-out); the idle time counts from the
last of them. It also prints the page fill's pages (a fill of the browsed listing runs for a while
after a browse of a big library), when its last page was, and RSS while it ran (the most, sampled
every 0.5 s) and just after it (the first sample after its last page). The ORM's modules loaded are printed (``server.db.tables``, ``sqlmodel``,
``pydantic``, ``sqlalchemy.orm``).

With ``--use --breakdown`` it says what the used server holds after the idle time: RSS by mapping
(smaps: the heap, anonymous mappings with the biggest of them, libraries, the database files' maps),
SQLite's memory per connection (page cache, schema, statements: the library's pooled connections and
the fragment store's), the Python objects each service of the context reaches (not through another
service), the reader processes' RSS (separate processes: not in the server's), when the clients'
database activity last moved and the page fill's pages and CPU (a fill of a big library reads for a
minute after a browse), who imported SQLAlchemy's ORM after the start if anything did; then, from a
second run traced by tracemalloc from before the use, the allocations still held by traceback and
by file.

    python bench/idle_memory.py [--baseline DIR] [--data DIR] [--idle 6] [--use [--breakdown]]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROBE = r"""
import ctypes, json, os, socket, sys, threading, time
out, idle, warm, port = sys.argv[1], float(sys.argv[2]), sys.argv[3] in ("1", "use", "use+"), int(sys.argv[4])
use = sys.argv[3] in ("use", "use+", "use*")
breakdown, traced = sys.argv[3] in ("use+", "use*"), sys.argv[3] == "use+"
if not warm:
    import server.users.passwords as pw
    from concurrent.futures import Future
    _loaded = Future()
    _loaded.set_result(None)  # (argon2 "loaded": the code cache settles as without the stub)
    pw.warm_up_soon = lambda *a, **k: _loaded

class MI(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]

def ready():
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"GET /System/Info/Public HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            return s.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False

def dump():
    while not ready():  # idle from the first 200 on
        time.sleep(0.05)
    if breakdown:
        open(out + ".ready", "w").close()
    if traced:  # what the use allocates and keeps, by traceback (tracemalloc's own memory is said)
        import tracemalloc
        tracemalloc.start(12)
    if use:  # the bench uses the server, then says so in this file: idle from then on
        while not os.path.exists(out + ".used"):
            time.sleep(0.05)
    if use:  # when the database last moved (the trimmer's quiet rule) and the fill's pages and RSS, every 0.5 s
        ctx, t0 = _context(), time.monotonic()
        seen, moved, fill_end = None, 0.0, 0.0
        while time.monotonic() - t0 < idle:
            now = (ctx.db.activity, ctx.page_fill.pages) if ctx is not None else None
            if now and seen and now[0] != seen[0]:
                moved = time.monotonic() - t0
            if now and seen and now[1] != seen[1]:
                fill_end = time.monotonic() - t0
            seen = now
            rss = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmRSS")][0] / 1024
            SAMPLES.append((time.monotonic() - t0, rss, now[1] if now else 0))
            time.sleep(0.5)
        running = [r for t, r, pages in SAMPLES if 0 < pages and t <= fill_end]
        FILL.update({"pages": seen[1] if seen else 0, "last page": fill_end, "max": max(running, default=0.0),
                     "after": [r for t, r, _ in SAMPLES if t > fill_end][:1] or [0.0]})
        ACTIVITY.update({"clients' activity last moved [s after the use]": round(moved, 1),
                         "the page fill's last page [s]": round(fill_end, 1),
                         "the trimmer's releases": ctx.memory.releases if ctx is not None else None,
                         "fill pages": seen[1] if seen else None,
                         "fill CPU [ms/page]": round(ctx.page_fill.cpu / max(1, ctx.page_fill.pages) * 1000, 2)
                         if ctx is not None else None})
    else:
        time.sleep(idle)
    status = {l.split(":")[0]: int(l.split()[1]) / 1024 for l in open("/proc/self/status")
              if l.startswith(("VmRSS", "VmHWM", "RssAnon", "RssFile"))}
    path = out + ".malloc"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC)
    saved = os.dup(2); os.dup2(fd, 2)
    sys._debugmallocstats()
    os.dup2(saved, 2); os.close(fd)
    pymalloc = {}
    for line in open(path):
        for key in ("# arenas allocated current", "# bytes in allocated blocks"):
            if line.startswith(key):
                pymalloc[key.lstrip("# ")] = int(line.split("=")[1].replace(",", ""))
    os.unlink(path)
    glibc = {}
    try:
        sq = ctypes.CDLL("libsqlite3.so.0"); sq.sqlite3_memory_used.restype = ctypes.c_int64
        glibc["sqlite"] = sq.sqlite3_memory_used()
    except OSError:
        pass
    try:
        libc = ctypes.CDLL("libc.so.6"); libc.mallinfo2.restype = MI
        mi = libc.mallinfo2()
        glibc.update({"heap in use": mi.uordblks, "heap free": mi.fordblks, "mmapped": mi.hblkhd})
    except (OSError, AttributeError):
        pass
    parts = BREAKDOWN() if breakdown else None  # (after the figures above: its walk allocates)
    tops = {}
    for name in list(sys.modules):
        tops[name.split(".")[0]] = tops.get(name.split(".")[0], 0) + 1
    orm = {m: m in sys.modules for m in ("server.db.tables", "sqlmodel", "pydantic", "sqlalchemy.orm")}
    json.dump({"orm": orm, "status": status, "pymalloc": pymalloc, "glibc": glibc, "threads": threading.active_count() - 1,
               "modules": len(sys.modules), "tops": tops, "breakdown": parts, "fill": FILL}, open(out, "w"))
    os.kill(os.getpid(), 15)

def _context():
    # the served ServerContext: a local of some frame of the server's threads (the runner's serve)
    for frame in sys._current_frames().values():
        while frame is not None:
            for value in list(frame.f_locals.values()):  # (by type name only: a getattr may do work)
                if type(value).__name__ == "ServerRunner":
                    value = vars(value).get("ctx")
                if type(value).__name__ == "ServerContext":
                    return value
            frame = frame.f_back
    return None

_found_connections = {}
ACTIVITY = {}
SAMPLES = []  # (s after the use, RSS MiB, the fill's pages)
FILL = {}

def _deep(root, stop, limit=3_000_000):
    # bytes of what ``root`` reaches (sys.getsizeof), not through ``stop`` (ids), modules, classes,
    # code, the event loop and its tasks; the SQLite connections met on the way are noted
    import asyncio, gc, sqlite3, types
    skip = (types.ModuleType, type, types.FunctionType, types.CodeType, types.BuiltinFunctionType,
            types.FrameType, threading.Thread, asyncio.AbstractEventLoop, asyncio.Future)
    seen, todo, total, conns = set(stop), [root], 0, []
    while todo and len(seen) < limit:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, skip):
            continue
        seen.add(id(obj))
        if type(obj) is sqlite3.Connection:
            _found_connections[id(obj)] = obj
        try:
            total += sys.getsizeof(obj)
        except TypeError:
            pass
        todo.extend(gc.get_referents(obj))
    return total

def _sqlite_connections():
    import gc, sqlite3
    sq = ctypes.CDLL("libsqlite3.so.0")
    sq.sqlite3_db_filename.restype = ctypes.c_char_p
    sq.sqlite3_db_filename.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    sq.sqlite3_db_status.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                     ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    rows = []
    found = {id(c): c for c in gc.get_objects() if type(c) is sqlite3.Connection}
    found.update(_found_connections)
    for conn in found.values():
        if type(conn) is not sqlite3.Connection:
            continue
        handle = ctypes.c_void_p.from_address(id(conn) + 16).value  # (pysqlite_Connection: head, sqlite3 *db)
        if not handle:
            continue
        cur, hi = ctypes.c_int(), ctypes.c_int()
        used = {}
        for name, op in (("cache", 1), ("schema", 2), ("stmt", 3)):
            sq.sqlite3_db_status(handle, op, ctypes.byref(cur), ctypes.byref(hi), 0)
            used[name] = cur.value
        name = (sq.sqlite3_db_filename(handle, b"main") or b":memory:").decode()
        rows.append([os.path.basename(name) or ":memory:", used["cache"], used["schema"], used["stmt"]])
    return sorted(rows, key=lambda r: -r[1])

def _smaps(top=10):
    groups, anon = {}, []
    name, size = None, 0
    for line in open("/proc/self/smaps"):
        head = line.split()
        if "-" in head[0] and not head[0].endswith(":"):
            name = head[5] if len(head) > 5 else "[anon]"
            lo, hi = (int(x, 16) for x in head[0].split("-"))
            size = hi - lo
        elif head[0] == "Rss:":
            kib = int(head[1])
            if name == "[anon]":
                anon.append((kib, size >> 10))
            key = name if not name.startswith("/") or name.endswith((".sqlite3", ".db", "-shm")) \
                else ("[python, libraries]" if ".so" in name or "python" in name else name)
            groups[key] = groups.get(key, 0) + kib
    rows = sorted(groups.items(), key=lambda kv: -kv[1])[:top]
    anon.sort(reverse=True)
    return {"groups": rows, "anon": anon[:8], "anon count": len(anon)}

def BREAKDOWN():
    result = {"activity": ACTIVITY}
    try:
        result["smaps"] = _smaps()
    except Exception as exc:
        result["smaps"] = repr(exc)
    ctx = _context()
    if ctx is not None:
        services = {k: v for k, v in vars(ctx).items() if not isinstance(v, (int, float, str, bool, type(None)))}
        stop = {id(ctx)} | {id(v) for v in services.values()}
        sizes = []
        for key, value in services.items():
            sizes.append([key, _deep(value, stop - {id(value)})])
        sizes.sort(key=lambda r: -r[1])
        result["services"] = sizes[:14]
        inner = {}
        for key, _ in sizes[:6]:
            value = services[key]
            attrs = {k: v for k, v in (vars(value).items() if hasattr(value, "__dict__") else [])}
            inner_stop = stop | {id(v) for v in attrs.values()}
            rows = [[k, _deep(v, inner_stop - {id(v)})] for k, v in attrs.items()]
            inner[key] = sorted(rows, key=lambda r: -r[1])[:6]
        result["inside"] = inner
        readers = getattr(ctx, "readers", None)
        pids = readers.pids() if readers is not None else []
        result["readers"] = []
        for pid in pids:
            try:
                rss = [int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")][0]
            except OSError:
                continue
            result["readers"].append([pid, rss])
    try:
        result["sqlite"] = _sqlite_connections()
    except Exception as exc:
        result["sqlite"] = repr(exc)
    import tracemalloc
    if tracemalloc.is_tracing():
        snap = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
        result["traced"] = tracemalloc.get_traced_memory()[0]
        result["tracemalloc own"] = tracemalloc.get_tracemalloc_memory()
        tops = []
        for stat in snap.statistics("traceback")[:12]:
            frames = [f"{os.path.relpath(f.filename) if 'site-packages' not in f.filename else f.filename.split('site-packages/')[1]}:{f.lineno}"
                      for f in stat.traceback]
            tops.append([stat.size, stat.count, frames[-4:]])  # (innermost last? see below)
        result["tracemalloc"] = tops
        result["by file"] = [[str(s.traceback[0].filename).split("site-packages/")[-1].replace(os.getcwd() + "/", ""),
                              s.size] for s in snap.statistics("filename")[:10]]
    return result
def _orm_import(event, args):  # who loads SQLAlchemy's ORM after the start (its modules: several MiB)
    if event == "import" and args[0] == "sqlalchemy.orm" and "sqlalchemy.orm" not in sys.modules \
            and "orm import" not in ACTIVITY and os.path.exists(out + ".ready"):
        import traceback
        ACTIVITY["orm import"] = [l.strip().split("\n")[0] for l in traceback.format_stack()[-14:-1]]

if breakdown:
    sys.addaudithook(_orm_import)
threading.Thread(target=dump, daemon=True).start()
sys.argv = ["reelroom-server"] + sys.argv[5:]
from app.server_main import main
sys.exit(main())
"""

IMPORTS = [
    ("asyncio (with ssl)", "import asyncio"),
    ("sqlalchemy", "import sqlalchemy"),
    ("sqlalchemy + orm", "import sqlalchemy.orm"),
    ("sqlmodel (orm, pydantic)", "import sqlmodel"),
    ("pydantic", "import pydantic, pydantic.main"),
    ("litestar", "import litestar"),
    ("uvicorn.server", "import uvicorn.server"),
    ("msgspec", "import msgspec"),
    ("the server's start (all of it)", "import app.server_main, server.runner, server.context, server.app"),
]


def import_cost(root: Path, statement: str) -> tuple[float, int]:
    code = ("import warnings; warnings.simplefilter('ignore')\n"
            "def r():\n    return [int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('RssAnon')][0]/1024\n"
            f"import sys\na = r(); n = len(sys.modules)\n{statement}\nprint(r() - a, len(sys.modules) - n)")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(root)}, cwd=root,
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1])


def _use(port: str, out: Path) -> None:
    """What jellyfin-web asks when a user signs in, sees the home screen, opens a library, an item and
    plays it for a moment, then signs out (the wizard first on a data folder without a user)."""
    import time
    import urllib.error
    import urllib.request

    base = f"http://127.0.0.1:{port}"
    header = 'MediaBrowser Client="Jellyfin Web", Device="Firefox", DeviceId="idle-bench", Version="10.10.0"'

    def ask(method: str, path: str, body: object = None, token: str | None = None) -> object:
        data = None if body is None else json.dumps(body).encode()
        auth = header + (f', Token="{token}"' if token else "")
        req = urllib.request.Request(base + path, data=data, method=method, headers={"Authorization": auth})
        if data is not None:
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=120) as r:
            raw = r.read()
        return json.loads(raw) if raw[:1] in (b"{", b"[") else None

    while True:
        try:
            info = ask("GET", "/System/Info/Public")
            break
        except (OSError, urllib.error.URLError):
            time.sleep(0.1)
    assert isinstance(info, dict)
    if not info.get("StartupWizardCompleted"):
        ask("POST", "/Startup/Configuration", {"UICulture": "en-US", "MetadataCountryCode": "US",
                                               "PreferredMetadataLanguage": "en"})
        ask("GET", "/Startup/User")
        ask("POST", "/Startup/User", {"Name": "bench", "Password": "bench"})
        ask("POST", "/Startup/Complete")
    signed = ask("POST", "/Users/AuthenticateByName", {"Username": "bench", "Pw": "bench"})
    assert isinstance(signed, dict)
    token, uid = signed["AccessToken"], signed["User"]["Id"]

    def get(path: str) -> dict:
        answer = ask("GET", path, token=token)
        return answer if isinstance(answer, dict) else {"Items": answer}

    get("/Users/Me")
    get(f"/Users/{uid}")
    get(f"/DisplayPreferences/usersettings?userId={uid}&client=emby")
    views = get(f"/UserViews?userId={uid}")["Items"]
    get(f"/UserItems/Resume?userId={uid}&Limit=12&Recursive=true&Fields=PrimaryImageAspectRatio&MediaTypes=Video")
    for view in views:
        get(f"/Items/Latest?userId={uid}&Limit=16&Fields=PrimaryImageAspectRatio&ParentId={view['Id']}")
    get(f"/Shows/NextUp?userId={uid}&Limit=24&Fields=PrimaryImageAspectRatio&EnableTotalRecordCount=false")
    ask("POST", "/Sessions/Capabilities/Full", {"PlayableMediaTypes": ["Audio", "Video"], "SupportedCommands": [
        "DisplayMessage", "SetVolume"], "SupportsMediaControl": True}, token=token)
    get("/System/Info")
    page = get(f"/Items?userId={uid}&SortBy=SortName&SortOrder=Ascending&IncludeItemTypes=Movie&Recursive=true"
               f"&Fields=PrimaryImageAspectRatio,MediaSourceCount&StartIndex=0&Limit=100"
               + (f"&ParentId={views[0]['Id']}" if views else ""))
    items = page.get("Items") or []
    if items:
        item_id = items[0]["Id"]
        get(f"/Users/{uid}/Items/{item_id}")
        played = ask("POST", f"/Items/{item_id}/PlaybackInfo?userId={uid}", {"UserId": uid, "AutoOpenLiveStream": True,
                                                                             "MaxStreamingBitrate": 140000000},
                     token=token)
        source = played["MediaSources"][0]["Id"] if isinstance(played, dict) and played.get("MediaSources") else None
        state = {"ItemId": item_id, "MediaSourceId": source, "PlaySessionId": "idle-bench", "PositionTicks": 0,
                 "CanSeek": True, "PlayMethod": "DirectPlay"}
        ask("POST", "/Sessions/Playing", state, token=token)
        ask("POST", "/Sessions/Playing/Progress", {**state, "PositionTicks": 50_000_000}, token=token)
        ask("POST", "/Sessions/Playing/Stopped", {**state, "PositionTicks": 60_000_000}, token=token)
    ask("POST", "/Sessions/Logout", token=token)
    Path(str(out) + ".used").write_text("1")


def probe(root: Path, data: Path | None, idle: float, warm: bool, use: bool = False,
          breakdown: str = "") -> dict:
    folder = Path(tempfile.mkdtemp(prefix="reelroom-idle-"))
    try:
        data_dir = folder / "data"
        if data is not None:
            shutil.copytree(data, data_dir)
        out = folder / "probe.json"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = str(s.getsockname()[1])
        mode = {"traced": "use+", "untraced": "use*"}.get(breakdown, "use") if use else "1" if warm else "0"
        server = subprocess.Popen([sys.executable, "-c", PROBE, str(out), str(idle), mode, port, "--data-dir",
                                   str(data_dir), "--port", port, "--host", "127.0.0.1", "--no-lan"], cwd=root,
                                  env={**os.environ, "PYTHONPATH": str(root)}, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            if use:
                _use(port, out)
            server.wait(timeout=300)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
        return json.loads(out.read_text())
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout's folder, side by side")
    parser.add_argument("--data", type=Path, default=None, help="a data folder to start on (copied; e.g. a kept library)")
    parser.add_argument("--idle", type=float, default=6.0)
    parser.add_argument("--use", action="store_true", help="sign in and browse before idling (see above)")
    parser.add_argument("--breakdown", action="store_true",
                        help="with --use: what the idle server holds, by mapping, SQLite connection, service and "
                             "allocation (a second run, traced by tracemalloc from before the use)")
    args = parser.parse_args()
    trees = [("this tree", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    for _, root in trees:
        for sub in ("server", "app"):
            compileall.compile_dir(str(root / sub), quiet=1)
    rows: dict[str, list[str]] = {}

    def add(key: str, value: str) -> None:
        rows.setdefault(key, []).append(value)

    mib = 2 ** 20
    details: list[tuple[str, dict]] = []
    for label, root in trees:
        full = probe(root, args.data, args.idle, True, args.use, "untraced" if args.breakdown else "")
        if args.breakdown and args.use:
            traced = probe(root, args.data, args.idle, True, True, "traced")["breakdown"]
            details.append((label, {**full["breakdown"], **{k: v for k, v in traced.items() if k not in full["breakdown"]
                                                            or k in ("traced", "tracemalloc", "by file")}}))
        quiet = full if args.use else probe(root, args.data, args.idle, False)
        s, p, g = full["status"], full["pymalloc"], full["glibc"]
        add("idle RSS [MiB]", f"{s['VmRSS']:.1f}")
        add("  anonymous / file-backed [MiB]", f"{s['RssAnon']:.1f} / {s['RssFile']:.1f}")
        add("  pymalloc: live small objects / arenas [MiB]",
            f"{p.get('bytes in allocated blocks', 0) / mib:.1f} / {p.get('arenas allocated current', 0)}")
        if "sqlite" in g:
            add("  SQLite's memory (page caches of all connections) [MiB]", f"{g['sqlite'] / mib:.1f}")
        if "heap in use" in g:
            add("  glibc heap: in use / free / mmapped [MiB]",
                f"{g['heap in use'] / mib:.1f} / {g['heap free'] / mib:.1f} / {g['mmapped'] / mib:.1f}")
        add("  threads, modules", f"{full['threads']}, {full['modules']}")
        add("  ORM loaded (tables, sqlmodel, pydantic, sqlalchemy.orm)",
            " ".join("y" if loaded else "-" for loaded in full["orm"].values()))
        fill = full.get("fill") or {}
        if args.use and fill:
            add("  page fill: pages, last page [s after the use]", f"{fill['pages']}, {fill['last page']:.1f}")
            add("  RSS while it ran (max) / after its end [MiB]", f"{fill['max']:.1f} / {fill['after'][0]:.1f}")
        add("peak RSS of the start [MiB]" if not args.use else "peak RSS [MiB]", f"{s['VmHWM']:.1f}")
        if not args.use:
            add("  the same without the dummy password hash [MiB]", f"{quiet['status']['VmHWM']:.1f}")
        for label, statement in ([] if args.use else IMPORTS):
            cost, count = import_cost(root, statement)
            add(f"import {label} [MiB anon, modules]", f"{cost:.1f}, {count}")
    print(f"cpus: {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}, idle {args.idle:.0f} s"
          f"{' after a sign-in and a browse (--use)' if args.use else ''}, data: {args.data or 'empty folder'}")
    print(f"{'':52s}" + "".join(f"{label:>22s}" for label, _ in trees))
    for key, values in rows.items():
        print(f"{key:52s}" + "".join(f"{v:>22s}" for v in values))
    for label, parts in details:
        print_breakdown(label, parts)


def print_breakdown(label: str, parts: dict) -> None:
    """The ``--breakdown`` run's findings (its RSS includes tracemalloc's own memory: said)."""
    kib = 1024
    print(f"\n== breakdown: {label} (tracemalloc's part: a second run, traced from before the use)")
    smaps = parts.get("smaps")
    if isinstance(smaps, dict):
        print("  smaps, RSS by mapping [MiB]: " + ", ".join(f"{name} {rss / kib:.1f}" for name, rss in smaps["groups"]))
        print(f"  anonymous mappings: {smaps['anon count']}, the biggest (RSS / size MiB): "
              + ", ".join(f"{rss / kib:.1f}/{size / kib:.0f}" for rss, size in smaps["anon"]))
    activity = dict(parts.get("activity") or {})
    orm = activity.pop("orm import", None)
    print(f"  the database's activity (the trimmer's releases, the page fill's pages): {activity}")
    if orm:
        print("  SQLAlchemy's ORM imported after the start by: " + " <- ".join(reversed(orm)))
    sqlite = parts.get("sqlite")
    if isinstance(sqlite, list):
        print(f"  SQLite connections ({len(sqlite)}; page cache / schema / statements, MiB):")
        for name, cache, schema, stmt in sqlite:
            print(f"    {name:28s} {cache / 2**20:6.2f} / {schema / 2**20:.2f} / {stmt / 2**20:.2f}")
    elif sqlite:
        print(f"  SQLite connections: {sqlite}")
    if "services" in parts:
        print("  services (Python objects each reaches, not through another service; MiB): "
              + ", ".join(f"{k} {v / 2**20:.2f}" for k, v in parts["services"]))
        for key, rows in parts.get("inside", {}).items():
            print(f"    {key}: " + ", ".join(f"{k} {v / 2**20:.2f}" for k, v in rows))
        readers = parts.get("readers") or []
        print("  reader processes (separate processes, not in the server's RSS): "
              + (", ".join(f"pid {pid} {rss / kib:.1f} MiB" for pid, rss in readers) or "none running"))
    if "traced" in parts:
        print(f"  tracemalloc: {parts['traced'] / 2**20:.1f} MiB live traced (allocated since before the use, still "
              f"held), its own memory {parts['tracemalloc own'] / 2**20:.1f} MiB; by file: "
              + ", ".join(f"{name} {size / 2**20:.2f}" for name, size in parts.get("by file", [])))
        for size, count, frames in parts.get("tracemalloc", []):
            print(f"    {size / 2**20:6.2f} MiB {count:7d} blocks  " + " <- ".join(reversed(frames)))


if __name__ == "__main__":
    main()
