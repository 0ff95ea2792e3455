"""Reelroom's version is looked up in the installed distribution once per process: a start asks for
it some 15 times (the OpenAPI document, each built-in plugin, the providers' user agent), and each
``importlib.metadata`` lookup finds and parses the METADATA file again (~1.3 ms)."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

START = """
import asyncio, json, sys
from importlib import metadata
from pathlib import Path

looked_up = []
real_version = metadata.version
def version(name):
    looked_up.append(name)
    return real_version(name)
metadata.version = version

import server.users.passwords as passwords
from server.app import create_app
from server.context import ServerContext, ServerOptions
from server.version import reelroom_version
from concurrent.futures import Future
loaded = Future()
loaded.set_result(None)
passwords.warm_up_soon = lambda: loaded  # no argon2 for this check (the code cache settles at once)

async def main():
    ctx = ServerContext(ServerOptions(data_dir=Path(sys.argv[1]), port=0, enable_lan=False))
    create_app(ctx)
    await ctx.initialize()
    assert ctx.startup.ready, ctx.startup.failed
    ctx.tasks.stopped = True
    await ctx.close()
    print(json.dumps({"looked_up": looked_up, "version": reelroom_version()}))

asyncio.run(main())
"""


def test_a_start_reads_the_distributions_version_once(tmp_path):
    out = subprocess.run([sys.executable, "-c", START, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["looked_up"].count("reelroom") == 1
    assert result["version"] == metadata.version("reelroom")
