"""After ready, the requests that waited for it come first: the start-up tasks' work, the
recorder's first look at its timers and the dummy password hash begin ``BACKGROUND_AFTER_SECONDS``
later (server/context.py), not in the same turn of the loop, where the tasks' first steps,
SQLAlchemy's mapper configuration and argon2's four lanes held up the first 200 by 20-130 ms. The
start-up runs are under way at once: they show as running, and a start of one meanwhile gets it. A
sign-in before the warm-up still queues behind the dummy hash (server/users/passwords.py)."""

from __future__ import annotations

import asyncio
import logging
import time

import server.users.passwords as passwords
from server.app import create_app
from server.context import BACKGROUND_AFTER_SECONDS, ServerContext, ServerOptions


def _begun(caplog) -> list[str]:
    """The tasks whose work began ("Task X started" in the log)."""
    return [r.getMessage() for r in caplog.records if r.name == "reelroom.tasks" and r.getMessage().endswith(" started")]


async def _ready_context(tmp_path) -> ServerContext:
    ctx = ServerContext(ServerOptions(data_dir=tmp_path, port=0, enable_lan=False))
    create_app(ctx)
    await ctx.initialize()
    assert ctx.startup.ready, ctx.startup.failed
    return ctx


async def test_the_start_up_work_and_the_dummy_hash_begin_a_moment_after_ready(tmp_path, monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="reelroom.tasks")
    monkeypatch.setattr(passwords, "_warm_up_queued", False, raising=False)
    ctx = await _ready_context(tmp_path)
    try:
        await asyncio.sleep(0.05)  # turns of the loop: what was started at ready has begun
        assert _begun(caplog) == []
        assert passwords._warm_up_queued is False
        assert ctx.tasks.is_running("RefreshLibrary")  # a start-up run (StartupTrigger), under way at once
        assert ctx.tasks.start("RefreshLibrary") is ctx.tasks.start("RefreshLibrary")  # a start gets it
        deadline = time.monotonic() + BACKGROUND_AFTER_SECONDS + 10
        while "Task Scan Media Library started" not in _begun(caplog) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert "Task Scan Media Library started" in _begun(caplog)
        assert passwords._warm_up_queued is True
    finally:
        await ctx.close()


async def test_a_close_before_then_begins_no_work(tmp_path, monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="reelroom.tasks")
    monkeypatch.setattr(passwords, "_warm_up_queued", False, raising=False)
    ctx = await _ready_context(tmp_path)
    await ctx.close()
    await asyncio.sleep(BACKGROUND_AFTER_SECONDS + 0.3)
    assert _begun(caplog) == []
    results = [t.LastExecutionResult for t in ctx.tasks.infos() if t.LastExecutionResult is not None]
    assert results and {r.Status for r in results} == {"Cancelled"}  # the start-up runs, as a close cancels any
    assert passwords._warm_up_queued is False


async def test_a_sign_in_before_the_warm_up_queues_the_dummy_hash_first(monkeypatch):
    stored = passwords.hash_password("secret")
    monkeypatch.setattr(passwords, "_warm_up_queued", False, raising=False)
    monkeypatch.setattr(passwords, "_dummy_hash", None)
    assert await passwords.verify_password_async(stored, "secret") is True
    # the known account's check waited behind the dummy hash (one worker here: the same queue)
    assert passwords._dummy_hash is not None
    assert await passwords.verify_password_async(None, "secret", known_user=False) is False
