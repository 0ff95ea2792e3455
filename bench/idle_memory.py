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
last of them. The ORM's modules loaded are printed (``server.db.tables``, ``sqlmodel``,
``pydantic``, ``sqlalchemy.orm``).

    python bench/idle_memory.py [--baseline DIR] [--data DIR] [--idle 6] [--use]
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
out, idle, warm, port = sys.argv[1], float(sys.argv[2]), sys.argv[3] in ("1", "use"), int(sys.argv[4])
use = sys.argv[3] == "use"
if not warm:
    import server.users.passwords as pw
    pw.warm_up_soon = lambda *a, **k: None

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
    if use:  # the bench uses the server, then says so in this file: idle from then on
        while not os.path.exists(out + ".used"):
            time.sleep(0.05)
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
    tops = {}
    for name in list(sys.modules):
        tops[name.split(".")[0]] = tops.get(name.split(".")[0], 0) + 1
    orm = {m: m in sys.modules for m in ("server.db.tables", "sqlmodel", "pydantic", "sqlalchemy.orm")}
    json.dump({"orm": orm, "status": status, "pymalloc": pymalloc, "glibc": glibc, "threads": threading.active_count() - 1,
               "modules": len(sys.modules), "tops": tops}, open(out, "w"))
    os.kill(os.getpid(), 15)

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


def probe(root: Path, data: Path | None, idle: float, warm: bool, use: bool = False) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="reelroom-idle-"))
    try:
        data_dir = folder / "data"
        if data is not None:
            shutil.copytree(data, data_dir)
        out = folder / "probe.json"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = str(s.getsockname()[1])
        mode = "use" if use else "1" if warm else "0"
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
    args = parser.parse_args()
    trees = [("this tree", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    for _, root in trees:
        for sub in ("server", "app"):
            compileall.compile_dir(str(root / sub), quiet=1)
    rows: dict[str, list[str]] = {}

    def add(key: str, value: str) -> None:
        rows.setdefault(key, []).append(value)

    mib = 2 ** 20
    for _, root in trees:
        full = probe(root, args.data, args.idle, True, args.use)
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


if __name__ == "__main__":
    main()
