"""Live TV in the item store, so that Jellyfin clients reach channels and recordings through the
ordinary item routes (/Items/{id}, images, favourites, user data, PlaybackInfo, Similar).

- The "Live TV" view: a ``UserView`` row (collection type ``livetv``) that exists while a tuner
  offers channels; jellyfin-web builds its Live TV menu from it.
- Channels: ``TvChannel`` rows under the view (``library_id`` = the view's id), kept in step with
  the tuners' playlists. ``original_title`` holds the channel number (a text such as "5.1"),
  ``sort_name`` orders by number; the logo (tvg-logo) is downloaded once into
  ``<metadata>/livetv/<id>/`` and is the row's Primary image (with BlurHash).
- Recordings: ``Video`` rows (id = the timer's id) with the recorded file as ``path``, in the
  "Recordings" CollectionFolder (``library_id`` = its own id, so no library scan owns it);
  recordings of a series sit in a ``Folder`` per series. Probed when the recording ends, so they
  play through PlaybackInfo and byte ranges like any video.
- Access: both views are gated on the user's EnableLiveTvAccess (server/library/catalog/items.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import delete, select

from server.db.database import load_orm_classes
from server.db.handles import items
from server.guid import guid_from_text
from server.library.catalog.sorting import sort_name

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

log = logging.getLogger("reelroom.livetv")

LIVETV_FOLDER_ID = guid_from_text("folder", "livetv")
RECORDINGS_FOLDER_ID = guid_from_text("folder", "recordings")
LIVETV_LIBRARY_IDS = frozenset({LIVETV_FOLDER_ID, RECORDINGS_FOLDER_ID})
MAX_LOGO_BYTES = 5 * 1024 * 1024
TICKS_PER_SECOND = 10_000_000


def _channel_sort(number: str | None, name: str) -> str:
    if number:
        head, _, tail = number.partition(".")
        if head.isdigit():
            return f"{int(head):010d}.{tail:0>4}-{sort_name(name)}"
    return f"~{sort_name(name)}"


def sync_channels(s: Session, channels: list) -> list[str]:
    """Make the view and channel rows match ``channels``; returns the ids whose logo is missing."""
    if not channels:  # no tuner (every start runs this before its first 200): on the table, no ORM
        if s.execute(select(items.c.id).where(items.c.library_id == LIVETV_FOLDER_ID).limit(1)).first():
            # (no statement when there is nothing: it would count as a content write)
            s.execute(delete(items).where(items.c.library_id == LIVETV_FOLDER_ID))
        return []
    from server.db.tables import Item  # (the ORM classes and SQLModel only with a tuner)

    rows = {r.id: r for r in s.execute(select(Item).where(Item.library_id == LIVETV_FOLDER_ID)).scalars()}
    view = rows.pop(LIVETV_FOLDER_ID, None)
    if view is None:
        s.add(Item(id=LIVETV_FOLDER_ID, type="UserView", is_folder=True, name="Live TV", sort_name="live tv",
                   library_id=LIVETV_FOLDER_ID, media_type="Unknown"))
    need_logo = []
    for ch in channels:
        row = rows.pop(ch.id, None)
        genres = json.dumps([ch.group] if ch.group else [])
        logo_key = ch.logo or None
        if row is None:
            row = Item(id=ch.id, type="TvChannel", media_type="Video", is_folder=False, library_id=LIVETV_FOLDER_ID,
                       parent_id=LIVETV_FOLDER_ID)
            s.add(row)
        row.name = ch.name
        row.original_title = ch.number
        row.sort_name = _channel_sort(ch.number, ch.name)
        row.genres_json = genres
        provider = json.loads(row.provider_ids_json or "{}")
        if provider.get("TvgLogo") != logo_key:  # a new logo URL: fetch it again
            row.images_json = "[]"
        provider = {k: v for k, v in {"TvgId": ch.tvg_id, "TvgLogo": logo_key}.items() if v}
        row.provider_ids_json = json.dumps(provider)
        if logo_key and row.images_json in (None, "", "[]"):
            need_logo.append(ch.id)
    for gone in rows.values():
        s.delete(gone)
    return need_logo


async def fetch_logo(url: str, folder: Path) -> dict | None:
    """Download a channel logo into ``folder``; the images_json entry for it, or None."""
    import httpx  # loaded when first needed, not at start-up

    from server.media.images import blurhash_of, image_info, image_tag

    if not url.startswith(("http://", "https://")):
        return None
    try:
        async with httpx.AsyncClient(timeout=10, follow_redirects=True) as client, client.stream("GET", url) as reply:
            if reply.status_code != 200:
                return None
            data = b""
            async for chunk in reply.aiter_bytes():
                data += chunk
                if len(data) > MAX_LOGO_BYTES:
                    return None
    except httpx.HTTPError as exc:
        log.info("Channel logo %s could not be fetched: %s", url, exc)
        return None

    def store() -> dict | None:
        try:
            width, height, fmt = image_info(data)
            blur = blurhash_of(data)
        except Exception as exc:  # not an image Pillow can read
            log.info("Channel logo %s is not a usable image: %s", url, exc)
            return None
        ext = {"jpeg": "jpg"}.get(fmt.lower(), fmt.lower())
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"logo-{hashlib.sha1(data, usedforsecurity=False).hexdigest()[:16]}.{ext}"
        path.write_bytes(data)
        st = path.stat()
        return {"Type": "Primary", "Path": str(path), "Tag": image_tag(path, st.st_mtime, st.st_size),
                "Width": width, "Height": height, "BlurHash": blur}

    return await asyncio.to_thread(store)


# -- recordings -------------------------------------------------------------------------------


def _ensure_recordings_folder(s: Session, path: str) -> None:
    from server.db.tables import Item

    folder = s.get(Item, RECORDINGS_FOLDER_ID)
    if folder is None:
        s.add(Item(id=RECORDINGS_FOLDER_ID, type="CollectionFolder", is_folder=True, name="Recordings",
                   sort_name="recordings", library_id=RECORDINGS_FOLDER_ID, path=path))
        s.flush()
    elif folder.path != path:
        folder.path = path


def series_folder_id(name: str) -> str:
    return guid_from_text("livetv-series", name.casefold())


def upsert_recording(s: Session, timer, folder_path: str, program=None, probe: dict | None = None) -> None:
    """The recording's item row (created when the recording starts, filled in from the probe
    when it ends)."""
    from server.db.tables import Item

    _ensure_recordings_folder(s, folder_path)
    parent = RECORDINGS_FOLDER_ID
    is_series = program is not None and (program.episode is not None or bool(program.episode_title))
    if timer.series_timer_id or is_series:
        parent = series_folder_id(timer.name)
        if s.get(Item, parent) is None:
            s.add(Item(id=parent, type="Folder", is_folder=True, name=timer.name, sort_name=sort_name(timer.name),
                       library_id=RECORDINGS_FOLDER_ID, parent_id=RECORDINGS_FOLDER_ID))
    row = s.get(Item, timer.id)
    if row is None:
        row = Item(id=timer.id, type="Video", media_type="Video", library_id=RECORDINGS_FOLDER_ID,
                   date_created=datetime.now(UTC))
        s.add(row)
    start = timer.start_date if timer.start_date.tzinfo else timer.start_date.replace(tzinfo=UTC)
    title = timer.name
    if program is not None and program.episode_title:
        title = program.episode_title
    row.name = title
    row.sort_name = sort_name(f"{timer.name} {start:%Y%m%d%H%M%S}")
    row.parent_id = parent
    row.path = timer.recording_path
    row.container = "ts"
    row.video_type = "VideoFile"
    row.overview = timer.overview
    row.premiere_date = start
    row.series_name = timer.name if parent != RECORDINGS_FOLDER_ID else None
    if program is not None:
        row.genres_json = json.dumps(list(program.categories))
        row.index_number = program.episode
        row.parent_index_number = program.season
        row.production_year = program.year
        row.official_rating = program.rating
    if probe is not None:
        row.media_streams_json = json.dumps(probe.get("Streams") or [])
        row.run_time_ticks = probe.get("RunTimeTicks")
        row.bitrate = probe.get("Bitrate")
        row.container = probe.get("Container") or "ts"
        video = next((x for x in probe.get("Streams") or [] if x.get("Type") == "Video"), None)
        if video:
            row.width, row.height = video.get("Width"), video.get("Height")
    if row.path:
        try:
            st = os.stat(row.path)
            row.size = row.file_size = st.st_size
            row.file_mtime = st.st_mtime
        except OSError:
            pass
    row.date_modified = datetime.now(UTC)


def delete_recording_row(s: Session, recording_id: str) -> None:
    from server.db.tables import Item

    row = s.get(Item, recording_id)
    if row is None:
        return
    parent = row.parent_id
    s.delete(row)
    s.flush()
    if parent and parent != RECORDINGS_FOLDER_ID:
        left = s.execute(select(items.c.id).where(items.c.parent_id == parent).limit(1)).first()
        if left is None:
            folder = s.get(Item, parent)
            if folder is not None:
                s.delete(folder)


def probe_recording(path: str) -> dict | None:
    from server.media.probe import ProbeError, probe_file

    try:
        probe = probe_file(path, is_audio=False)
    except ProbeError as exc:
        log.warning("Recording %s could not be probed: %s", path, exc)
        return None
    return {"Streams": [x.to_wire() for x in probe.streams], "RunTimeTicks": probe.run_time_ticks,
            "Bitrate": probe.bitrate, "Container": probe.container}


class LiveTvItems:
    """Keeps the item store in step with the tuners (registered as LiveTvService.on_channels)."""

    def __init__(self, db, metadata_dir: Path) -> None:
        self.db = db
        self.logo_dir = metadata_dir / "livetv"
        self._logo_tasks: dict[str, asyncio.Task] = {}
        self._last: list | None = None

    async def sync(self, channels: list) -> None:
        if channels == self._last:
            return
        need_logo = await self.db.write(lambda s: sync_channels(s, channels))
        self._last = list(channels)
        by_id = {c.id: c for c in channels}
        for channel_id in need_logo:
            if channel_id not in self._logo_tasks or self._logo_tasks[channel_id].done():
                self._logo_tasks[channel_id] = asyncio.create_task(self._logo(by_id[channel_id]),
                                                                   name=f"channel-logo-{channel_id}")

    async def _logo(self, channel) -> None:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Item

        entry = await fetch_logo(channel.logo, self.logo_dir / channel.id)
        if entry is None:
            return

        def write(s: Session) -> None:
            row = s.get(Item, channel.id)
            if row is not None:
                row.images_json = json.dumps([entry])

        await self.db.write(write)

    async def wait_for_logos(self) -> None:
        tasks = [t for t in self._logo_tasks.values() if not t.done()]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self) -> None:
        for task in self._logo_tasks.values():
            task.cancel()
