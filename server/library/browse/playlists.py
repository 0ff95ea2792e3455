"""Playlists: an ``items`` row (type Playlist, under the Playlists folder) plus the
``playlists`` (owner, public), ``playlist_entries`` (ordered entries, each with its own
PlaylistItemId) and ``playlist_users`` (shares, CanEdit) tables.

Permissions follow Jellyfin 10.10: the owner and users it is shared with see a playlist (and
everyone when it is public); the owner and shares with CanEdit change its items; only the
owner changes its shares, name and visibility. A caller without a user (an API key) may do
everything. Added folders (albums, series, seasons, ...) are expanded into their tracks or
episodes in play order.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Row, delete, func, insert, select, update

from server.db.database import load_orm_classes
from server.db.handles import items, playlists
from server.db.handles import playlist_entries as entries
from server.db.handles import playlist_shares as shares
from server.errors import BadRequestError, ForbiddenError, NotFoundError
from server.library.browse.playstate import playable_descendants
from server.library.catalog.dto import DtoOptions, build_dtos, build_fragments
from server.library.catalog.fragments import FragmentCache, splice
from server.library.catalog.generation_cache import GenerationCache
from server.library.catalog.query import (
    PLAYLISTS_FOLDER_ID,
    ItemRow,
    ParentalRules,
    get_row,
    get_rows,
    parental_conditions,
)
from server.library.catalog.sorting import sort_name
from server.wire import models as w
from server.wire.casing import encode_wire

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from server.db.database import Database
    from server.users.service import UserService

# The folder every playlist row hangs under (Jellyfin's ManualPlaylistsFolder; view type
# "playlists"): PLAYLISTS_FOLDER_ID, defined with the query engine that scopes on it.


_MEDIA_TYPES = ("Unknown", "Video", "Audio", "Photo", "Book")


@dataclass
class PlaylistAccess:
    playlist: Row[Any]  # playlists row
    row: ItemRow  # items row
    shares: dict[str, bool]  # user id -> can edit

    def can_view(self, user_id: str | None) -> bool:
        return user_id is None or self.playlist.is_public or self.owns(user_id) or user_id in self.shares

    def can_edit(self, user_id: str | None) -> bool:
        return user_id is None or self.owns(user_id) or self.shares.get(user_id, False)

    def owns(self, user_id: str | None) -> bool:
        return user_id is None or self.playlist.owner_user_id == user_id


def ensure_folder(s: Session) -> None:
    from server.db.tables import Item

    if s.get(Item, PLAYLISTS_FOLDER_ID) is None:
        s.add(Item(id=PLAYLISTS_FOLDER_ID, type="ManualPlaylistsFolder", is_folder=True, name="Playlists",
                   sort_name="playlists", library_id=PLAYLISTS_FOLDER_ID))
        s.flush()


def expand(s: Session, item_ids: list[str]) -> list[str]:
    """Playable ids for the given ids, folders expanded in play order; unknown ids are skipped."""
    rows = get_rows(s, item_ids)
    out: list[str] = []
    for item_id in item_ids:
        row = rows.get(item_id)
        if row is None:
            continue
        if not row.is_folder:
            out.append(row.id)
            continue
        found = get_rows(s, playable_descendants(s, row))
        ordered = sorted(found.values(), key=lambda r: (r.parent_index_number or 0, r.index_number or 0,
                                                        r.sort_name or "", r.id))
        out.extend(r.id for r in ordered)
    return out


def _load(s: Session, playlist_id: str) -> PlaylistAccess | None:
    pl = s.execute(select(playlists).where(playlists.c.id == playlist_id)).first()
    row = get_row(s, playlist_id)
    if pl is None or row is None:
        return None
    found = {r.user_id: bool(r.can_edit) for r in s.execute(select(shares).where(shares.c.playlist_id == playlist_id))}
    return PlaylistAccess(pl, row, found)


def _append(s: Session, playlist_id: str, item_ids: list[str]) -> None:
    if not item_ids:
        return
    last = s.execute(select(func.max(entries.c.sort_order)).where(entries.c.playlist_id == playlist_id)).scalar()
    start = -1 if last is None else last
    s.execute(insert(entries), [{"id": uuid.uuid4().hex, "playlist_id": playlist_id, "item_id": item_id,
                                 "sort_order": start + 1 + i} for i, item_id in enumerate(item_ids)])


def _renumber(s: Session, playlist_id: str, ordered_entry_ids: list[str]) -> None:
    for i, entry_id in enumerate(ordered_entry_ids):
        s.execute(update(entries).where(entries.c.id == entry_id).values(sort_order=i))


def _entry_ids(s: Session, playlist_id: str) -> list[tuple[str, str]]:
    """(entry id, item id) in order."""
    q = select(entries.c.id, entries.c.item_id).where(entries.c.playlist_id == playlist_id) \
        .order_by(entries.c.sort_order, entries.c.id)
    return [(r[0], r[1]) for r in s.execute(q).all()]


def _touch(s: Session, playlist_id: str) -> None:
    s.execute(update(items).where(items.c.id == playlist_id).values(date_modified=datetime.now(UTC)))


class PlaylistService:
    def __init__(self, db: Database, users: UserService, server_id: str,
                 on_change: Callable[[], None] = lambda: None, fragments: FragmentCache | None = None) -> None:
        self.db = db
        #: the item DTO fragments (ItemService's) a playlist's page is assembled from (items_reply)
        self.fragments = fragments
        self._users = users  # (``users`` is the method that lists a playlist's shares)
        self.server_id = server_id
        # called after a playlist's items change: covers are collages of them (the artwork service
        # remakes them soon)
        self._on_change = on_change
        self._entries: GenerationCache[tuple[str, tuple[str, ...] | None, str], list[tuple[str, str]]] = \
            GenerationCache(16)
        # a playlist's row, owner, publicity and shares as a page read them (content: kept per
        # content generation like the entries; three statements, ~1 ms, a fifth of a page's read)
        self._pages_access: GenerationCache[str, PlaylistAccess] = GenerationCache(16)

    async def _access(self, playlist_id: str, user_id: str | None, *, view: bool = True) -> PlaylistAccess:
        found = await self.db.read(lambda s: _load(s, playlist_id))
        if found is None or (view and not found.can_view(user_id)):
            raise NotFoundError("Playlist not found.")
        return found

    async def create(self, owner_id: str | None, name: str | None, item_ids: list[str], media_type: str | None,
                     share_with: list[tuple[str, bool]], is_public: bool | None) -> str:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import Item, Playlist, PlaylistShare

        name = (name or "").strip()
        if not name:
            raise BadRequestError("A playlist needs a name.")
        if media_type and media_type not in _MEDIA_TYPES:
            raise BadRequestError(f"Unknown media type {media_type!r}.")
        for user_id, _ in share_with:
            await self._users.get(user_id)
        playlist_id = uuid.uuid4().hex

        def write(s: Session) -> None:
            ensure_folder(s)
            wanted = expand(s, item_ids)
            kind = media_type
            if not kind or kind == "Unknown":
                first = get_rows(s, wanted[:1])
                kind = next((r.media_type for r in first.values()), None) or "Unknown"
            s.add(Item(id=playlist_id, type="Playlist", media_type=kind, is_folder=True, name=name,
                       sort_name=sort_name(name), parent_id=PLAYLISTS_FOLDER_ID, library_id=PLAYLISTS_FOLDER_ID,
                       date_modified=datetime.now(UTC)))
            s.add(Playlist(id=playlist_id, owner_user_id=owner_id, is_public=bool(is_public), media_type=kind))
            s.flush()
            for user_id, can_edit in share_with:
                if user_id != owner_id:
                    s.add(PlaylistShare(playlist_id=playlist_id, user_id=user_id, can_edit=can_edit))
            _append(s, playlist_id, wanted)

        await self.db.write(write)
        self._on_change()
        return playlist_id

    async def update(self, playlist_id: str, caller: str | None, name: str | None, item_ids: list[str] | None,
                     share_with: list[tuple[str, bool]] | None, is_public: bool | None) -> None:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import PlaylistShare

        found = await self._access(playlist_id, caller)
        if not found.can_edit(caller):
            raise ForbiddenError("You may not change this playlist.")
        if name is not None and not name.strip():
            raise BadRequestError("A playlist needs a name.")
        for user_id, _ in share_with or ():
            await self._users.get(user_id)

        def write(s: Session) -> None:
            if name is not None:
                s.execute(update(items).where(items.c.id == playlist_id).values(name=name.strip(),
                                                                                 sort_name=sort_name(name.strip())))
            if is_public is not None:
                s.execute(update(playlists).where(playlists.c.id == playlist_id).values(is_public=is_public))
            if item_ids is not None:
                s.execute(delete(entries).where(entries.c.playlist_id == playlist_id))
                _append(s, playlist_id, expand(s, item_ids))
            if share_with is not None:
                s.execute(delete(shares).where(shares.c.playlist_id == playlist_id))
                for user_id, can_edit in share_with:
                    if user_id != found.playlist.owner_user_id:
                        s.add(PlaylistShare(playlist_id=playlist_id, user_id=user_id, can_edit=can_edit))
            _touch(s, playlist_id)

        await self.db.write(write)
        self._on_change()

    async def get(self, playlist_id: str, caller: str | None) -> w.PlaylistDto:
        found = await self._access(playlist_id, caller)
        pairs = await self.db.read(lambda s: _entry_ids(s, playlist_id))
        return w.PlaylistDto(OpenAccess=bool(found.playlist.is_public),
                             Shares=[w.PlaylistUserPermissions(UserId=u, CanEdit=e) for u, e in found.shares.items()],
                             ItemIds=[item_id for _, item_id in pairs])

    async def add(self, playlist_id: str, caller: str | None, item_ids: list[str]) -> None:
        found = await self._access(playlist_id, caller)
        if not found.can_edit(caller):
            raise ForbiddenError("You may not change this playlist.")

        def write(s: Session) -> None:
            _append(s, playlist_id, expand(s, item_ids))
            _touch(s, playlist_id)

        await self.db.write(write)
        self._on_change()

    async def remove(self, playlist_id: str, caller: str | None, entry_ids: list[str]) -> None:
        found = await self._access(playlist_id, caller)
        if not found.can_edit(caller):
            raise ForbiddenError("You may not change this playlist.")

        def write(s: Session) -> None:
            pairs = _entry_ids(s, playlist_id)
            by_entry = {e for e, _ in pairs}
            doomed = {e for e in entry_ids if e in by_entry}
            # Some clients send item ids: remove that item's entries.
            wanted_items = {e for e in entry_ids if e not in by_entry}
            doomed |= {e for e, item_id in pairs if item_id in wanted_items}
            if doomed:
                s.execute(delete(entries).where(entries.c.id.in_(sorted(doomed))))
                _renumber(s, playlist_id, [e for e, _ in pairs if e not in doomed])
                _touch(s, playlist_id)

        await self.db.write(write)
        self._on_change()

    async def move(self, playlist_id: str, caller: str | None, entry_id: str, new_index: int) -> None:
        if new_index < 0:
            raise BadRequestError("newIndex must not be negative.")
        found = await self._access(playlist_id, caller)
        if not found.can_edit(caller):
            raise ForbiddenError("You may not change this playlist.")

        def write(s: Session) -> None:
            order = [e for e, _ in _entry_ids(s, playlist_id)]
            items_of = dict(_entry_ids(s, playlist_id))
            if entry_id in order:
                moving = entry_id
            else:  # an item id: its first entry
                moving = next((e for e in order if items_of[e] == entry_id), None)
                if moving is None:
                    raise NotFoundError("The playlist has no such entry.")
            order.remove(moving)
            order.insert(min(new_index, len(order)), moving)
            _renumber(s, playlist_id, order)
            _touch(s, playlist_id)

        await self.db.write(write)
        self._on_change()

    async def items(self, playlist_id: str, caller: str | None, opts: DtoOptions, start_index: int,
                    limit: int | None, allowed_library_ids: frozenset[str] | None = None,
                    parental: ParentalRules | None = None) -> w.BaseItemDtoQueryResult:
        """The playlist's entries the viewer may see (entries from libraries outside their policy,
        or hidden by their parental controls, are left out). The reference ``items_reply`` (what
        the API answers) is checked against."""
        read_page = self._page_reader(playlist_id, caller, allowed_library_ids, parental)

        def read(s: Session) -> w.BaseItemDtoQueryResult:
            page, total = read_page(s, start_index, limit)
            dtos = build_dtos(s, [row for _, row in page], opts, self.server_id)
            for dto, (entry_id, _) in zip(dtos, page, strict=True):
                dto.PlaylistItemId = entry_id
            return w.BaseItemDtoQueryResult(Items=dtos, TotalRecordCount=total, StartIndex=start_index)

        return await self.db.read(read)

    async def items_reply(self, playlist_id: str, caller: str | None, opts: DtoOptions, start_index: int,
                          limit: int | None, allowed_library_ids: frozenset[str] | None = None,
                          parental: ParentalRules | None = None, camel: bool = False) -> bytes:
        """``items``' reply already encoded (``camel``: camelCase names), assembled from the items'
        DTO fragments (catalog/fragments.py: a playlist's entries are the same few thousand items
        page after page, so most are kept) with each entry's PlaylistItemId spliced in."""
        read_page = self._page_reader(playlist_id, caller, allowed_library_ids, parental)
        key = b',"playlistItemId":"' if camel else b',"PlaylistItemId":"'

        def read(s: Session) -> bytes:
            page, total = read_page(s, start_index, limit)
            shell = encode_wire(w.BaseItemDtoQueryResult(Items=[], TotalRecordCount=total, StartIndex=start_index),
                                camel)
            made = build_fragments(s, [row for _, row in page], opts, self.server_id, self.fragments, camel)
            # each fragment is a JSON object: the entry id goes in before its closing brace
            return splice(shell, [b"".join((frag[:-1], key, entry_id.encode(), b'"}'))
                                  for frag, (entry_id, _) in zip(made, page, strict=True)])

        return await self.db.read(read)

    def _page_reader(self, playlist_id: str, caller: str | None, allowed_library_ids: frozenset[str] | None,
                     parental: ParentalRules | None
                     ) -> Callable[[Session, int, int | None], tuple[list[tuple[str, ItemRow]], int]]:
        """What a read calls for a page: access checked (404 for no playlist, 403 when the caller
        may not see it), then the viewer's visible (entry id, row) pairs of the page and their
        total, all in that one read."""
        key = (playlist_id, None if allowed_library_ids is None else tuple(sorted(allowed_library_ids)),
               repr(parental))

        def visible(s: Session) -> list[tuple[str, str]]:
            conds = [entries.c.playlist_id == playlist_id]
            if allowed_library_ids is not None:
                conds.append(items.c.library_id.in_(sorted(allowed_library_ids)))
            if parental is not None:
                conds += parental_conditions(s, parental)
            # the (entry, item) ids from the entries' covering order index; items only probed
            # for the scope (no wide item row read)
            source = entries.join(items, items.c.id == entries.c.item_id)
            q = (select(entries.c.id, entries.c.item_id).select_from(source).where(*conds)
                 .order_by(entries.c.sort_order, entries.c.id))
            return [(r[0], r[1]) for r in s.execute(q).all()]

        def read_page(s: Session, start_index: int, limit: int | None) -> tuple[list[tuple[str, ItemRow]], int]:
            # The viewer's ordered entries, kept per content generation (read before the first
            # query, so a list is never filed under a generation newer than its snapshot):
            # paging a long playlist reads it once, then each page is a slice and 100 rows by id.
            # They read no user data, so a play-state write (content_generation unchanged) keeps
            # them; entries, items, policies and ratings are content (the viewer's libraries and
            # parental rules are in the key, too). The playlist's access (owner, public, shares)
            # is kept the same way.
            generation = self.db.content_generation
            found = self._pages_access.get(playlist_id, generation)
            if found is None:
                found = _load(s, playlist_id)
                if found is not None:
                    self._pages_access.put(playlist_id, generation, found)
            if found is None:
                raise NotFoundError("Playlist not found.")
            if not found.can_view(caller):
                raise ForbiddenError("You may not see this playlist.")
            ordered = self._entries.get(key, generation)
            if ordered is None:
                ordered = visible(s)
                self._entries.put(key, generation, ordered)
            page_ids = ordered[start_index:None if limit is None else start_index + limit]
            rows = get_rows(s, [item_id for _, item_id in page_ids])
            return [(entry_id, rows[item_id]) for entry_id, item_id in page_ids if item_id in rows], len(ordered)

        return read_page

    async def item_ids(self, playlist_id: str, caller: str | None) -> list[str]:
        await self._access(playlist_id, caller)
        return [item_id for _, item_id in await self.db.read(lambda s: _entry_ids(s, playlist_id))]

    # -- users -------------------------------------------------------------------------

    async def users(self, playlist_id: str, caller: str | None) -> list[w.PlaylistUserPermissions]:
        found = await self._access(playlist_id, caller, view=False)
        if not (found.owns(caller) or caller in found.shares):
            raise ForbiddenError("You may not see this playlist's users.")
        return [w.PlaylistUserPermissions(UserId=u, CanEdit=e) for u, e in found.shares.items()]

    async def user(self, playlist_id: str, caller: str | None, user_id: str) -> w.PlaylistUserPermissions:
        found = await self._access(playlist_id, caller, view=False)
        if not (found.owns(caller) or caller == user_id):
            raise ForbiddenError("You may not see this playlist's users.")
        if user_id == found.playlist.owner_user_id:
            # The owner is not one of the shares but may always edit; jellyfin-web asks this to
            # decide whether to offer editing the playlist.
            return w.PlaylistUserPermissions(UserId=user_id, CanEdit=True)
        if user_id not in found.shares:
            raise NotFoundError("User permissions not found.")
        return w.PlaylistUserPermissions(UserId=user_id, CanEdit=found.shares[user_id])

    async def set_user(self, playlist_id: str, caller: str | None, user_id: str, can_edit: bool) -> None:
        await load_orm_classes()  # (the ORM classes imported off the event loop)
        from server.db.tables import PlaylistShare

        found = await self._access(playlist_id, caller, view=False)
        if not found.owns(caller):
            raise ForbiddenError("Only the owner may share this playlist.")
        await self._users.get(user_id)
        if user_id == found.playlist.owner_user_id:
            return

        def write(s: Session) -> None:
            existing = s.get(PlaylistShare, (playlist_id, user_id))
            if existing is None:
                s.add(PlaylistShare(playlist_id=playlist_id, user_id=user_id, can_edit=can_edit))
            else:
                existing.can_edit = can_edit
                s.add(existing)

        await self.db.write(write)

    async def remove_user(self, playlist_id: str, caller: str | None, user_id: str) -> None:
        found = await self._access(playlist_id, caller, view=False)
        if not found.owns(caller):
            raise ForbiddenError("Only the owner may change who shares this playlist.")
        if user_id not in found.shares:
            raise NotFoundError("User permissions not found.")
        await self.db.write(lambda s: s.execute(delete(shares).where(shares.c.playlist_id == playlist_id,
                                                                          shares.c.user_id == user_id)))

    async def is_playlist(self, item_id: str) -> bool:
        return await self.db.read(
            lambda s: s.execute(select(playlists.c.id).where(playlists.c.id == item_id)).first() is not None)
