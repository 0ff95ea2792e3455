"""server/code_cache.py: dataclasses' methods compiled in one run are taken from the cache in the
next, and a class made from the cache is the class ``dataclasses`` makes without it.

Each run is a fresh interpreter with the cache file in tmp_path (bytecode writing allowed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Dataclasses of every kind the generated methods differ by, and what a program sees of them.
CLASSES = '''
import dataclasses, inspect, json, sys
from dataclasses import InitVar, KW_ONLY, dataclass, field

@dataclass
class Plain:
    name: str
    year: int = 0
    tags: list = field(default_factory=list)

@dataclass(frozen=True, order=True, slots=True)
class Frozen:
    a: int
    b: str = "x"

@dataclass(unsafe_hash=True, kw_only=True)
class Hashed:
    x: int
    y: float = 1.5

@dataclass(eq=False, repr=False)
class Bare:
    value: object = None

@dataclass
class Later:
    base: int
    scale: InitVar[int] = 2
    _: KW_ONLY
    label: str = "l"
    total: int = field(init=False, default=0)

    def __post_init__(self, scale):
        self.total = self.base * scale

def errors(fn):
    try:
        fn()
    except Exception as exc:
        return type(exc).__name__
    return None

def facts():
    f = Frozen(1)
    return {
        "repr": [repr(Plain("a")), repr(f), repr(Hashed(x=1)), repr(Later(3, 4, label="q"))],
        "eq": [Plain("a") == Plain("a"), Plain("a") == Plain("b"), Bare() == Bare(), Frozen(1) < Frozen(2)],
        "hash": [hash(Frozen(1, "y")) == hash(Frozen(1, "y")), hash(Hashed(x=2)) == hash(Hashed(x=2))],
        "errors": [errors(lambda: setattr(f, "a", 2)), errors(lambda: Hashed(1)), errors(lambda: Plain())],
        "later": Later(3).total,
        "signatures": [str(inspect.signature(c)) for c in (Plain, Frozen, Hashed, Bare, Later)],
        "docs": [c.__doc__ for c in (Plain, Frozen, Hashed, Later)],
        "slots": Frozen.__slots__,
    }

def codes():
    """Every generated method's code, as comparable values."""
    out = []
    for c in (Plain, Frozen, Hashed, Bare, Later):
        for name in ("__init__", "__repr__", "__eq__", "__lt__", "__hash__", "__setattr__"):
            fn = c.__dict__.get(name)
            code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
            if code is not None:
                out.append([c.__name__, name, code.co_code.hex(), repr(code.co_consts), code.co_names,
                            code.co_varnames, code.co_filename, code.co_qualname])
    return out
'''

WITH_CACHE = '''
import sys
from server import code_cache
code_cache.FILE = sys.argv[1]
code_cache._codes.clear()  # server/__init__ installed the cache with the tree's file: the test's instead
code_cache._new.clear()  # (and what it compiled before this line: not the test's)
code_cache._codes.update(code_cache._read())
kept = len(code_cache._codes)
before = code_cache._compiled
''' + CLASSES + '''
compiled = code_cache._compiled - before
saved = code_cache.save()
print(json.dumps({"kept": kept, "compiled": compiled, "saved": saved, "facts": facts(), "codes": codes(),
                  "dataclasses_exec": dataclasses.__dict__.get("exec") is code_cache.cached_exec}))
'''

WITHOUT = CLASSES + '''
print(json.dumps({"facts": facts(), "codes": codes(), "server": "server" in sys.modules}))
'''


def _run(script: str, *args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run([sys.executable, "-c", script, *args], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_dataclasses_made_from_the_cache_are_the_ones_python_makes(tmp_path):
    cache = str(tmp_path / "dataclass-code.bin")
    plain = _run(WITHOUT)
    assert plain["server"] is False
    first = _run(WITH_CACHE, cache)  # compiles and keeps the texts
    assert first["dataclasses_exec"] is True
    assert first["kept"] == 0 and first["compiled"] > 10 and first["saved"] is True
    second = _run(WITH_CACHE, cache)  # compiles none of them
    assert second["kept"] >= first["compiled"]
    assert second["compiled"] == 0 and second["saved"] is False
    for run in (first, second):
        assert run["facts"] == plain["facts"]
        assert run["codes"] == plain["codes"]
    assert plain["facts"]["errors"] == ["FrozenInstanceError", "TypeError", "TypeError"]
    assert plain["facts"]["later"] == 6


def test_an_unreadable_or_foreign_cache_is_ignored(tmp_path):
    cache = tmp_path / "dataclass-code.bin"
    plain = _run(WITHOUT)
    for content in (b"", b"not a cache at all", b"\x00\x00\r\n" + b"x" * 64):
        cache.write_bytes(content)
        run = _run(WITH_CACHE, str(cache))
        assert run["kept"] == 0 and run["compiled"] > 10
        assert run["facts"] == plain["facts"] and run["codes"] == plain["codes"]
    # what that last run saved is read by the next
    assert _run(WITH_CACHE, str(cache))["compiled"] == 0


def test_a_start_compiles_no_dataclass_method_a_start_before_it_compiled(tmp_path):
    """The server's own start (its modules, ServerContext, the app): the second compiles nothing."""
    script = '''
import asyncio, json, sys
from pathlib import Path
from server import code_cache
code_cache.FILE = sys.argv[1]
code_cache._codes.clear()
code_cache._codes.update(code_cache._read())
kept = len(code_cache._codes)
before = code_cache._compiled
import app.server_main, server.runner
from server.app import create_app
from server.context import ServerContext, ServerOptions
ctx = ServerContext(ServerOptions(data_dir=Path(sys.argv[2]), port=0, enable_lan=False))
create_app(ctx)
compiled = code_cache._compiled - before
asyncio.run(ctx.close())
print(json.dumps({"kept": kept, "compiled": compiled, "saved": code_cache.save()}))
'''
    cache = str(tmp_path / "dataclass-code.bin")
    first = _run(script, cache, str(tmp_path / "data"))
    assert first["compiled"] > 100 and first["saved"] is True  # Litestar's and the server's dataclasses
    second = _run(script, cache, str(tmp_path / "data"))
    assert second["kept"] >= first["compiled"]
    assert second == {"kept": second["kept"], "compiled": 0, "saved": False}


@pytest.mark.parametrize("why", ["PYTHONDONTWRITEBYTECODE", "frozen"])
def test_nothing_is_written_without_bytecode_writing(tmp_path, why):
    """Like bytecode, never under PYTHONDONTWRITEBYTECODE; nor in a PyInstaller bundle
    (``sys.frozen``), whose folders are the installed app's."""
    script = '''
import json, sys
from server import code_cache
code_cache.FILE = sys.argv[1]
sys.frozen = sys.argv[2] == "frozen"
from dataclasses import dataclass

@dataclass
class Point:
    x: int

print(json.dumps({"compiled": code_cache._compiled > 0, "saved": code_cache.save()}))
'''
    cache = tmp_path / "dataclass-code.bin"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if why == "PYTHONDONTWRITEBYTECODE":
        env[why] = "1"
    out = subprocess.run([sys.executable, "-c", script, str(cache), why], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"compiled": True, "saved": False}
    assert not cache.exists()


def test_a_full_cache_keeps_only_what_the_saving_process_used(tmp_path):
    """Past ``MOST`` texts (other programs' classes, older versions of a class) the file is
    rewritten with the texts the saving process used, so it does not grow without end."""
    script = '''
import json, marshal, sys
from server import code_cache
code_cache.FILE = sys.argv[1]
code_cache.MOST = 5
old = {f"x = {i}": compile(f"x = {i}", "<string>", "exec") for i in range(10)}
with open(code_cache.FILE, "wb") as f:
    f.write(code_cache._HEADER + marshal.dumps(old))
code_cache._codes.clear()
code_cache._used.clear()
code_cache._codes.update(code_cache._read())
from dataclasses import dataclass

@dataclass
class Point:
    x: int
    y: int = 0

saved = code_cache.save()
kept = code_cache._read()
print(json.dumps({"saved": saved, "kept": sorted(hash(t) for t in kept) == sorted(code_cache._used), "old": sum(t in kept for t in old),
                  "point": repr(Point(1))}))
'''
    cache = tmp_path / "dataclass-code.bin"
    result = _run(script, str(cache))
    assert result == {"saved": True, "kept": True, "old": 0, "point": "Point(x=1, y=0)"}


def test_a_served_start_saves_then_lets_the_texts_go(tmp_path):
    """The runner's server: once ready it saves what its start compiled and lets the texts go
    (an idle server holds no more than without the cache); the next start compiles none of them."""
    script = '''
import json, socket, sys, threading, time
from pathlib import Path
from server import code_cache
code_cache.FILE = sys.argv[1]
code_cache._codes.clear()
code_cache._codes.update(code_cache._read())
kept = len(code_cache._codes)
before = code_cache._compiled
from server.context import ServerOptions
from server.runner import ServerRunner
runner = ServerRunner(ServerOptions(data_dir=Path(sys.argv[2]), port=0, host="127.0.0.1", enable_lan=False))
thread = threading.Thread(target=runner.serve, daemon=True)
thread.start()
assert runner.ready.wait(120)
compiled = code_cache._compiled - before
with socket.create_connection(("127.0.0.1", runner.port), timeout=30) as s:
    s.sendall(b"GET /System/Info/Public HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
    status = s.recv(65536).split(b"\\r\\n", 1)[0].decode()
deadline = time.monotonic() + 30
while code_cache._active and time.monotonic() < deadline:
    time.sleep(0.05)
settled = {"active": code_cache._active, "texts": len(code_cache._codes), "used": len(code_cache._used)}
runner.request_shutdown()
thread.join(30)
print(json.dumps({"kept": kept, "compiled": compiled, "status": status, "settled": settled,
                  "in_file": len(code_cache._read())}))
'''
    cache = str(tmp_path / "dataclass-code.bin")
    first = _run(script, cache, str(tmp_path / "data"))
    assert first["kept"] == 0 and first["compiled"] > 100
    assert first["status"] == "HTTP/1.1 200 OK"
    assert first["settled"] == {"active": False, "texts": 0, "used": 0}
    assert first["in_file"] >= first["compiled"]
    second = _run(script, cache, str(tmp_path / "data"))
    assert second["kept"] == first["in_file"] and second["compiled"] == 0
    assert second["settled"] == {"active": False, "texts": 0, "used": 0}
