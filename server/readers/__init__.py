"""Reader processes: heavy read requests (an Items page) answered on another core.

The server is one process, so its Python work runs on one core (the GIL) however the rest is
tuned. Live state (sessions, the WebSocket hub, SyncPlay, transcode jobs, tokens, the
configuration) stays in that owner process; a ``ReaderPool`` (``pool.py``, ``ctx.readers``)
starts reader processes (``worker.py``) only while the owner is busy, sends them the already
authorized, scoped query, and gets the encoded reply bytes back. See docs/architecture.md,
"Reader processes".
"""
