"""ImageCache on its own: one rendering per key even when the first waiter goes away, errors
reach every waiter, and the cleanup's age and size limits."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from server.errors import NotFoundError
from server.images.cache import ImageCache, RenderOptions
from server.media.images import ImageDecodeError
from tests.images.conftest import decode, make_picture


def test_a_cancelled_waiter_does_not_cancel_the_shared_rendering(tmp_path):
    source = str(make_picture(tmp_path / "big.jpg", (2000, 3000)))
    cache = ImageCache(tmp_path / "cache", workers=2)
    options = RenderOptions(max_width=300)

    async def scenario() -> list[bytes]:
        prepared = cache.prepare(source, options)
        first = asyncio.create_task(cache.render(source, options, prepared))
        others = [asyncio.create_task(cache.render(source, options, prepared)) for _ in range(3)]
        await asyncio.sleep(0)
        first.cancel()
        results = await asyncio.gather(*others)
        with pytest.raises(asyncio.CancelledError):
            await first
        return results

    try:
        results = asyncio.run(scenario())
        assert cache.renders == 1
        assert all(decode(r).size == (300, 450) for r in results)
        assert cache.prepare(source, options).body == results[0]  # stored on disk
    finally:
        cache.close()


def test_a_request_that_looked_before_a_rendering_was_stored_does_not_render_again(tmp_path):
    """Two requests for one rendering: the second looked the cache up (a miss) while the first
    was rendering, and asks for its rendering only after the first one was stored and left the
    in-flight map. It gets the stored file, not a second resize (seen under load as two
    renders for eight concurrent requests)."""
    source = str(make_picture(tmp_path / "big.jpg", (2000, 3000)))
    cache = ImageCache(tmp_path / "cache", workers=2)
    options = RenderOptions(max_width=300)

    async def scenario() -> tuple[bytes, bytes]:
        early = cache.prepare(source, options)  # the second request's look-up: a miss
        assert early.body is None
        first = await cache.render(source, options, cache.prepare(source, options))
        late = await cache.render(source, options, early)
        return first, late

    try:
        first, late = asyncio.run(scenario())
        assert first == late and decode(late).size == (300, 450)
        assert cache.renders == 1
    finally:
        cache.close()


def test_errors_reach_every_waiter_and_are_not_cached(tmp_path):
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png at all")
    cache = ImageCache(tmp_path / "cache", workers=1)
    options = RenderOptions(max_width=10, fmt="png")

    async def scenario() -> list[object]:
        prepared = cache.prepare(str(broken), options)
        return await asyncio.gather(*(cache.render(str(broken), options, prepared) for _ in range(3)),
                                    return_exceptions=True)

    try:
        results = asyncio.run(scenario())
        assert all(isinstance(r, ImageDecodeError) for r in results)
        assert cache.renders == 1
        assert cache.prepare(str(broken), options).body is None
        with pytest.raises(NotFoundError):
            cache.prepare(str(tmp_path / "missing.jpg"), options)
    finally:
        cache.close()


def test_clean_by_age_then_size(tmp_path):
    cache = ImageCache(tmp_path / "cache", workers=1)
    folder = tmp_path / "cache" / "ab"
    folder.mkdir(parents=True)
    now = time.time()
    ages = {"old.jpg": 40, "a.jpg": 3, "b.jpg": 2, "c.jpg": 1}
    for name, days in ages.items():
        path = folder / name
        path.write_bytes(b"x" * 1000)
        os.utime(path, (now - days * 86400, now - days * 86400))
    deleted, kept = cache.clean(max_age_days=30, max_bytes=2000)
    assert deleted == 2 and kept == 2000
    assert sorted(p.name for p in folder.iterdir()) == ["b.jpg", "c.jpg"]
    cache.close()


def test_kept_keys_and_bytes_follow_the_source(tmp_path):
    """A hit is answered from memory (the key, ETag and dates worked out once per source version,
    the rendering's bytes kept), but the source is looked at every time: a replaced file gets a
    new key and is rendered again. The kept bytes are bounded."""
    from server.images import cache as cache_module

    cache = ImageCache(tmp_path / "cache", workers=1)
    try:
        source = make_picture(tmp_path / "a.jpg", (300, 300))
        options = RenderOptions(max_width=100)
        first = cache.prepare(str(source), options)
        assert first.body is None
        body = asyncio.run(cache.render(str(source), options, first))
        assert decode(body).size == (100, 100)
        first.cache_path.unlink()  # gone from disk: the kept bytes answer
        hit = cache.prepare(str(source), options)
        assert hit.body == body and hit.etag == first.etag
        assert cache.prepare(str(source), options, if_none_match=first.etag).not_modified
        make_picture(source, (600, 300))
        os.utime(source, (time.time() + 10, time.time() + 10))
        changed = cache.prepare(str(source), options)
        assert changed.etag != first.etag and changed.body is None
        assert not cache.prepare(str(source), options, if_none_match=first.etag).not_modified
        assert decode(asyncio.run(cache.render(str(source), options, changed))).size == (100, 50)
        # bounded: least recently used out
        for n in range(20):
            cache._hot.put(f"k{n}", bytes(cache_module.HOT_MAX_BODY))
        assert cache._hot.size <= cache_module.HOT_BUDGET
        assert "k19" in cache._hot and "k0" not in cache._hot
        cache._hot.put("huge", bytes(cache_module.HOT_MAX_BODY + 1))
        assert "huge" not in cache._hot
    finally:
        cache.close()


def test_hits_of_data_folder_sources_are_answered_on_the_loop_with_the_same_answers(tmp_path):
    """A source in the data folder whose rendering is in memory is stat'ed and answered on the
    event loop (no look-up thread is started), with what the thread gives: the bytes, a 304 for
    its ETag or an unchanged If-Modified-Since, and a new key once the file is replaced. A source
    elsewhere (a library folder, maybe a network share), a missing one, or a rendering only on
    disk still goes through a look-up thread."""
    data = tmp_path / "data"
    cache = ImageCache(data / "cache" / "images", workers=1, local_root=data)
    try:
        options = RenderOptions(max_width=100)
        inside = str(make_picture(data / "metadata" / "a.jpg", (300, 300)))
        outside = str(make_picture(tmp_path / "library" / "b.jpg", (300, 300)))

        async def scenario() -> None:
            first = await cache.lookup(inside, options)  # (a miss: on a thread)
            body = await cache.render(inside, options, first)
            threads = len(cache._lookups._workers)
            assert threads == 1
            thread_hit = cache.prepare(inside, options)
            hit = await cache.lookup(inside, options)
            assert hit == thread_hit and hit.body == body
            not_modified = await cache.lookup(inside, options, if_none_match=first.etag)
            assert not_modified == cache.prepare(inside, options, if_none_match=first.etag)
            assert not_modified.not_modified and not_modified.body is None
            since = await cache.lookup(inside, options, if_modified_since=first.last_modified)
            assert since.not_modified
            assert not (await cache.lookup(inside, options, if_none_match='"other"')).not_modified
            assert len(cache._lookups._workers) == threads  # all of these on the loop
            # replaced: a new key and no bytes (rendered again), as the thread answers
            make_picture(Path(inside), (600, 300))
            os.utime(inside, (time.time() + 10, time.time() + 10))
            changed = await cache.lookup(inside, options)
            assert changed.etag != first.etag and changed.body is None
            assert decode(await cache.render(inside, options, changed)).size == (100, 50)
            # elsewhere: always a thread's look-up, even with its rendering in memory
            other = await cache.lookup(outside, options)
            await cache.render(outside, options, other)
            cache._lookups.shutdown()  # no thread may answer from here on
            assert (await cache.lookup(inside, options)).body is not None
            with pytest.raises(RuntimeError):
                await cache.lookup(outside, options)
            os.unlink(inside)
            with pytest.raises(RuntimeError):  # missing: left to the thread, which reports it
                await cache.lookup(inside, options)

        asyncio.run(scenario())
    finally:
        cache.close()
