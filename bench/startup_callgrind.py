"""Instructions a server start executes up to ready, counted by valgrind's callgrind, side by side
with a baseline checkout.

CPU time to the first 200 (``bench/startup.py``) moves by 20-40% from run to run on a shared,
busy machine; the instructions a start executes hardly move. For each tree this runs, under
``valgrind --tool=callgrind`` (every thread counted), what the entry point does up to ready, in
process and without HTTP: its imports, ``ServerContext``, ``create_app`` and
``ctx.initialize()`` (the migration check, the start's reads), then exits at once. Left out: the
dummy password hash (argon2, queued at ready, so after the first 200: under callgrind it would
count for more than the start) and uvicorn's serving (the same in both trees). A first start on an
empty data folder, then a restart on it. Bytecode is compiled first for both trees, and the
dataclass methods ``server/code_cache.py`` keeps are made as any earlier run leaves them (one
start without valgrind; ``--cold-code-cache`` removes them instead: the first run of a fresh
checkout, with bytecode).

    python bench/startup_callgrind.py [--baseline DIR] [--data DIR] [--cold-code-cache]   # --data: a library, copied

Slow: about a minute and a half a start under callgrind.
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

START = """
import asyncio, os, sys
from pathlib import Path
from server.memory import pause_collector
pause_collector()  # as the entry point does
import app.server_main  # the entry point's own imports
import server.runner  # noqa: F401
import server.users.passwords as passwords
from server.app import create_app
from server.context import ServerContext, ServerOptions
from concurrent.futures import Future
_loaded = Future()
_loaded.set_result(None)  # (the dummy hash left out: argon2 "loaded", the code cache settles)
passwords.warm_up_soon = lambda: _loaded  # the dummy hash: after the first 200

async def main():
    ctx = ServerContext(ServerOptions(data_dir=Path(sys.argv[1]), port=0, enable_lan=False, migrate_in_child=True))
    create_app(ctx)
    await ctx.initialize()
    assert ctx.startup.ready, ctx.startup.failed
    os._exit(0)

asyncio.run(main())
"""


def instructions(root: Path, data: Path) -> int:
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c",
                          START, str(data)], cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
                         capture_output=True, text=True, timeout=1800)
    found = re.search(r"Collected\s*:\s*(\d+)", out.stderr)
    if out.returncode != 0 or found is None:
        raise RuntimeError(f"{root}: the start failed\n{out.stderr[-2000:]}")
    return int(found.group(1))


CODE_CACHE = f"dataclass-code.{sys.implementation.cache_tag}.bin"  # server/code_cache.py's file


# The same start, which then saves what server/code_cache.py compiled (where the tree has it), as a
# served start does once it is ready.
PREPARE = START.replace("    os._exit(0)", """    cache = sys.modules.get("server.code_cache")
    if cache is not None:
        cache.save()
    os._exit(0)""")


def keep_dataclass_code(root: Path) -> None:
    """One start (without valgrind, on an empty data folder) with bytecode writing allowed: where the
    tree has server/code_cache.py its dataclasses' compiled methods are kept, as any earlier run
    leaves them."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="reelroom-startup-callgrind-prepare-") as data:
        subprocess.run([sys.executable, "-c", PREPARE, data], cwd=root, env={**env, "PYTHONPATH": str(root)},
                       check=True, timeout=300, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, default=None, help="a checkout (git worktree add DIR main)")
    parser.add_argument("--data", type=Path, default=None, help="a data folder to start on (copied), else empty")
    parser.add_argument("--cold-code-cache", action="store_true",
                        help="remove server/code_cache.py's file first (a first run from a fresh checkout)")
    args = parser.parse_args()
    trees = [("this tree", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    results: dict[str, list[int]] = {}
    for label, root in trees:
        for sub in ("server", "app"):
            compileall.compile_dir(str(root / sub), quiet=1, workers=1)
        if args.cold_code_cache:
            Path(root, "server", "__pycache__", CODE_CACHE).unlink(missing_ok=True)
        else:
            keep_dataclass_code(root)
        work = Path(tempfile.mkdtemp(prefix="reelroom-startup-callgrind-"))
        try:
            data = work / "data"
            if args.data is not None:
                shutil.copytree(args.data, data)
            results[label] = [instructions(root, data), instructions(root, data)]
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{'':34s}" + "".join(f"{label:>16s}" for label, _ in trees) + ("   ratio" if len(trees) > 1 else ""))
    for i, name in enumerate(("first start [G instructions]", "restart [G instructions]")):
        values = [results[label][i] / 1e9 for label, _ in trees]
        line = f"{name:34s}" + "".join(f"{v:16.3f}" for v in values)
        if len(values) > 1:
            line += f"   {values[0] / values[1]:.3f}"
        print(line)


if __name__ == "__main__":
    main()
