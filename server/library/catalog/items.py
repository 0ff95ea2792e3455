"""ItemService (``ctx.items``): the query engine and DTO builder behind the browse endpoints.

Handlers resolve the caller into a ``Viewer`` (user id, the libraries they may see, policy
flags), fill an ``ItemQuery`` and call ``query``; every read runs on the database's reader
pool in one session (rows, count and the DTO batch lookups together).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from sqlalchemy import insert, select, update

from server.auth.service import AuthInfo
from server.db.database import Database
from server.db.dialect import warn_about_collation
from server.db.handles import items, libraries
from server.db.records import Record
from server.db.schema import user_data as user_data_table
from server.errors import BadRequestError, ForbiddenError, NotFoundError
from server.events.hub import EventHub
from server.guid import normalize_guid
from server.library.catalog import facets, ids, search_index
from server.library.catalog.by_name import (
    NameEntry,
    NamePages,
    NameQuery,
    build_name_dtos,
    build_name_page,
    filter_hidden,
    find_name,
    list_names,
    parental_profile,
    with_user_data,
)
from server.library.catalog.dto import (
    ByNameTarget,
    DtoOptions,
    build_dtos,
    build_fragments,
    fragment_shape,
    stored_reply,
    user_data_dtos,
)
from server.library.catalog.fragment_store import FragmentStore, Stored, StoreUse
from server.library.catalog.fragments import DEFAULT_BUDGET, FragmentCache, splice
from server.library.catalog.generation_cache import GenerationCache
from server.library.catalog.home import ancestor_ids, latest_groups
from server.library.catalog.query import (
    PLAYLISTS_FOLDER_ID,
    ROOT_FOLDER_ID,
    ByNameIndex,
    CountCache,
    ItemQuery,
    ItemRow,
    ParentalRules,
    count_by_type,
    filter_values,
    get_row,
    get_rows,
    item_rows,
    item_visible,
    playlist_visible,
    run_query,
    run_query_with,
)
from server.library.catalog.search import SearchRequest, search_hints
from server.library.catalog.single_item import item_parts, user_data_part
from server.livetv.items import LIVETV_LIBRARY_IDS
from server.users.service import UserRecord, UserService
from server.wire import models as w
from server.wire.casing import encode_wire

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


ALL_FIELDS = frozenset(("Chapters", "ChildCount", "DateCreated", "Etag", "ExternalUrls", "Genres", "MediaSourceCount",
                        "MediaSources", "MediaStreams", "OriginalTitle", "Overview", "ParentId", "Path", "People",
                        "PrimaryImageAspectRatio", "ProviderIds", "RecursiveItemCount", "SortName", "Studios",
                        "Taglines", "Tags", "CanDelete", "CanDownload", "LocalTrailerCount", "SpecialFeatureCount",
                        "RemoteTrailers", "ProductionLocations", "Width", "Height", "IsHD", "SeriesStudio",
                        "LockedFields"))


#: The modules whose code makes a fragment's bytes (``dto``, ``fragments``, ``fragment_store``,
#: ``media_sources``, trickplay's service, the casing and the wire models) and every ``server``
#: module they import, at the top or inside a function: the source the code stamp is a hash of.
#: ``tests/library/query/test_page_fill.py`` checks that it is exactly that closure.
FRAGMENT_SEEDS = ("server.library.catalog.dto", "server.library.catalog.fragments",
                  "server.library.catalog.fragment_store", "server.library.catalog.media_sources",
                  "server.trickplay.service", "server.wire.casing", "server.wire.models")
FRAGMENT_MODULES = (
    "server.db", "server.db.database", "server.db.dialect", "server.db.handles", "server.db.schema",
    "server.db.tables", "server.db.threads", "server.errors", "server.events.hub", "server.guid",
    "server.library.catalog", "server.library.catalog.dto", "server.library.catalog.fragment_store",
    "server.library.catalog.fragments", "server.library.catalog.ids", "server.library.catalog.media_sources",
    "server.library.catalog.query", "server.library.catalog.search_index", "server.media", "server.media.spawn",
    "server.paths", "server.resources", "server.system.localization", "server.tasks.scheduler",
    "server.trickplay.service", "server.wire", "server.wire.casing", "server.wire.models")


def module_file(name: str) -> Path:
    """Where the source of the ``server`` module ``name`` is (without importing it): its ``.py``
    file, or its package's ``__init__.py``."""
    import server

    path = Path(server.__file__).parent.joinpath(*name.split(".")[1:])
    return path.with_name(path.name + ".py") if not path.is_dir() else path / "__init__.py"


@functools.cache
def fragment_code_stamp() -> str:
    """What identifies the code that makes fragments (fragment_store.code_stamp): the source of
    ``FRAGMENT_MODULES`` (the version where it cannot be read: a frozen bundle). Once a process
    (the files of a running server's code do not change under it)."""
    from server.library.catalog import fragment_store
    from server.version import reelroom_version

    return fragment_store.code_stamp([module_file(m) for m in FRAGMENT_MODULES], reelroom_version())


def _lower_tags(values: list[str] | None) -> list[str]:
    return [v.strip().lower() for v in values or [] if v and v.strip()]


#: Path parameters that name an item. Any of them whose value is an item the caller may not
#: see makes the whole request a 404 (ItemService.check_path_items, run by the guard).
ITEM_PATH_PARAMS = ("itemId", "routeItemId", "videoId", "seriesId", "collectionId", "playlistId", "mediaSourceId",
                    "routeMediaSourceId", "recordingId", "programId", "channelId")


@dataclass(frozen=True)
class Viewer:
    """Whose view of the library a request gets."""

    user: UserRecord | None
    country: str | None = None  # the server's MetadataCountryCode: how rating strings are read

    @property
    def user_id(self) -> str | None:
        return self.user.id if self.user else None

    @property
    def allowed_library_ids(self) -> frozenset[str] | None:
        if self.user is None:
            return None
        policy = self.user.policy
        if policy.EnableAllFolders is not False:
            return None
        allowed = frozenset(i for i in (normalize_guid(f) for f in (policy.EnabledFolders or [])) if i)
        if self.may_watch_livetv:
            allowed |= LIVETV_LIBRARY_IDS
        return allowed | {PLAYLISTS_FOLDER_ID}  # everyone has playlists (their own and shared ones)

    @property
    def may_watch_livetv(self) -> bool:
        """Channels and recordings (server/livetv/items.py) follow EnableLiveTvAccess, not the
        library folders."""
        return self.user is None or self.user.policy.EnableLiveTvAccess is not False

    @functools.cached_property
    def parental(self) -> ParentalRules | None:
        """The user's parental controls (None when they have none). Worked out once per viewer
        (a request's: its user record and country do not change under it); an Items page asks
        it twice (its scope, the reply cache's ``keep``), other routes more."""
        if self.user is None:
            return None
        p = self.user.policy
        rules = ParentalRules(
            max_rating=p.MaxParentalRating, block_unrated=tuple(sorted(set(p.BlockUnratedItems or []))),
            blocked_tags=tuple(sorted(set(_lower_tags(p.BlockedTags)))),
            allowed_tags=tuple(sorted(set(_lower_tags(p.AllowedTags)))), country=self.country)
        return rules if rules.active else None

    @property
    def restricted(self) -> bool:
        return self.allowed_library_ids is not None or self.parental is not None or not self.may_watch_livetv

    @property
    def can_delete(self) -> bool:
        if self.user is None:
            return True
        p = self.user.policy
        return bool(p.EnableContentDeletion) or bool(p.EnableContentDeletionFromFolders)

    @property
    def can_download(self) -> bool:
        return self.user is None or self.user.policy.EnableContentDownloading is not False


#: Reads a single item's miss elsewhere (``ItemService.item_reply``'s ``elsewhere``: a reader process,
#: ``ReaderPool.item``): ``(key, viewer, opts, camel)`` in, ``item_parts_read``'s answer out, or
#: None when it cannot (the owner reads it then).
ItemElsewhere = Callable[[str, Viewer, DtoOptions, bool], Awaitable[tuple[bytes, bytes] | bool | None]]

VIEWS_KEPT = 256  # UserViews answers kept (users x argument sets)
VIEWERS_KEPT = 256  # Viewers kept (ItemService._viewer_of), one per user
VERDICTS_KEPT = 8192  # (item, viewer) pairs whose may-see verdict and user data part are kept


@dataclass(slots=True)
class _Seen:
    """What a viewer was last told about one item (ItemService.item_reply, check_path_items):
    valid while the library's content, the user's record (their policy: a change makes a new
    record) and their parental rules (with the rating country) are the ones it was made with."""

    content: int  # Database.content_generation the verdict was read at
    user: UserRecord | None
    parental: ParentalRules | None
    visible: bool
    stamp: tuple[int, int] | None = None  # Database.user_generation(user) the user data part was read at
    user_data: bytes = b""  # GET /Items/{id}'s ``,"UserData":{...}}`` (camelCase or not: see the key)


class UserDataRecord(Record):
    """A user's data on an item, to change (``ItemService.update_user_data``): its columns as attributes."""

    user_id: str
    item_id: str
    played: bool
    play_count: int
    is_favorite: bool
    playback_position_ticks: int
    last_played_date: datetime | None
    rating: float | None
    likes: bool | None
    audio_stream_index: int | None
    subtitle_stream_index: int | None


def new_user_data(user_id: str, item_id: str) -> dict[str, Any]:
    """A new row's values: nothing played, no favourite, no rating (every column, as written)."""
    return {"user_id": user_id, "item_id": item_id, "played": False, "play_count": 0, "is_favorite": False,
            "playback_position_ticks": 0, "last_played_date": None, "rating": None, "likes": None,
            "audio_stream_index": None, "subtitle_stream_index": None}


class ItemService:
    def __init__(self, db: Database, users: UserService, server_id: str, events: EventHub | None = None,
                 rating_country: Callable[[], str | None] = lambda: None,
                 fragment_budget: int = DEFAULT_BUDGET, store: FragmentStore | None = None,
                 config_generation: Callable[[], int] = lambda: 0,
                 store_state: Callable[[], str | None] | None = None) -> None:
        self.db = db
        #: encoded fragments on disk (fragment_store.py): pages anywhere in a big library from bytes
        self.store = store
        #: the state of the files the store's fragments depend on (the SQLite database, the
        #: configuration: fragment_store.files_state), for taking over the last clean run's epoch
        self.store_state = store_state
        self.config_generation = config_generation
        self.users = users
        self.server_id = server_id
        self.events = events
        self.count_cache = CountCache()
        self.rating_country = rating_country  # MetadataCountryCode: the country whose ratings apply
        self._viewers: dict[str, Viewer] = {}  # by user id: see _viewer_of
        #: by-name ids (genres, studios, artists, years) back to names, rebuilt after writes
        self.by_name = ByNameIndex(lambda: db.content_generation)  # names never come from user data
        #: by-name list pages (counted entries, DTOs without UserData) per content generation
        self.name_pages = NamePages()
        #: Search/Hints replies (no user data in them) per content generation
        self.searches: GenerationCache[tuple[Any, ...], w.SearchHintResult] = GenerationCache(32)
        #: UserViews per (user, includeHidden, fields): (generation, user record, DTOs), see views()
        self._views: dict[tuple[str | None, bool, tuple[str, ...]], tuple[int, UserRecord | None,
                                                                         list[w.BaseItemDto]]] = {}
        #: the same, encoded: (generation, user record, bytes) per (user, includeHidden, fields, casing)
        self._views_bytes: dict[tuple[str | None, bool, tuple[str, ...], bool], tuple[int, UserRecord | None,
                                                                                bytes]] = {}
        #: encoded DTOs per item and shape, used while what they were made from is unchanged
        self.fragments = FragmentCache(fragment_budget)
        #: may-see verdicts and GET /Items/{id}'s user data parts per (item, user, casing), see _Seen
        self._seen: dict[tuple[str, str | None, bool], _Seen] = {}

    async def start(self) -> None:
        """After the migration: check the search index (see search_index.ensure) and the kept
        list counts' triggers (facets.ensure)."""
        await asyncio.to_thread(search_index.ensure, self.db.engine)
        await asyncio.to_thread(facets.ensure, self.db.engine)
        if self.store is not None:  # opened beside the start (pages go without it until then)
            adopt = None
            if self.store_state is not None:
                # (the stamp before the state: a write after it moves the stamp, one before it the state)
                stamp = (self.db.content_generation, self.config_generation())
                state = await asyncio.to_thread(self.store_state)
                adopt = (state, stamp) if state else None
            threading.Thread(target=self.store.open, args=(adopt,), name="fragment-store-open", daemon=True).start()
        if self.db.dialect == "postgresql":
            await asyncio.to_thread(warn_about_collation, self.db.engine)

    async def viewer(self, auth: AuthInfo | None, user_id: str | None) -> Viewer:
        """The user named by ``userId`` (404 if unknown; only admins may name another user),
        else the caller; an API key without userId sees everything."""
        if user_id:
            target = normalize_guid(user_id)
            if target is None:
                raise BadRequestError(f"userId is not a valid GUID: {user_id!r}")
            user = await self.users.get(target)
            if auth is not None and not auth.is_admin and auth.user_id != target:
                raise ForbiddenError("Only an administrator may act for another user.")
            return self._viewer_of(user)
        if auth is not None and auth.user is not None:
            return self._viewer_of(await self.users.get(auth.user.id))
        return Viewer(None)

    def _viewer_of(self, user: UserRecord) -> Viewer:
        """``Viewer(user, country)``, the same one again while the user's record (a policy change
        makes a new one) and the rating country are the ones it was made of: a Viewer is frozen,
        and what it works out once (its ``parental`` rules) follows from those two alone, so a
        page need not build its rules again (every Items page asks for them)."""
        country = self.rating_country()
        kept = self._viewers.get(user.id)
        if kept is not None and kept.user is user and kept.country == country:
            return kept
        viewer = Viewer(user, country)
        if len(self._viewers) >= VIEWERS_KEPT:
            self._viewers.clear()
        self._viewers[user.id] = viewer
        return viewer

    async def check_path_items(self, auth: AuthInfo | None, path_params: dict[str, Any],
                               user_id: str | None = None) -> None:
        """The one library-scope check of every route with an item in its path (run by the
        guard, server/api/base.py): 404, as Jellyfin answers, when the caller may not see the
        item: it is outside the libraries their policy allows, or their parental controls hide
        it. An API key acts for the user named by ``userId``, else sees everything. Values that
        are no item (a by-name id, a live TV id, a malformed id) are left to the handler."""
        if auth is None:
            return
        if auth.user is not None:
            user = await self.users.find(auth.user.id)
        elif user_id and (target := normalize_guid(user_id)):
            user = await self.users.find(target)
        else:
            return
        if user is None:
            return
        viewer = Viewer(user, self.rating_country())
        if not viewer.restricted:
            return
        keys = [(name, key) for name in ITEM_PATH_PARAMS
                if isinstance(path_params.get(name), str) and (key := normalize_guid(path_params[name]))]
        if not keys:
            return
        content = self.db.content_generation  # taken before reading: a write meanwhile outdates the verdicts
        parental = viewer.parental
        unknown = []
        for name, key in keys:
            seen = self._seen_by(key, user, parental, content, False)
            if seen is None:
                unknown.append((name, key))
            elif not seen.visible:
                raise NotFoundError(f"Item {path_params[name]} not found.")
        if not unknown:
            return

        def read(s: Session) -> list[tuple[str, bool | None]]:
            out: list[tuple[str, bool | None]] = []
            for name, key in unknown:
                row = get_row(s, key)
                out.append((name, None if row is None else self._may_see(s, row, viewer)))
            return out

        for (name, key), (_, visible) in zip(unknown, await self.db.read(read), strict=True):
            if visible is None:
                continue  # no item row: left to the handler
            self._keep_seen(key, user, parental, content, False, visible)
            if not visible:
                raise NotFoundError(f"Item {path_params[name]} not found.")

    def _seen_by(self, key: str, user: UserRecord | None, parental: ParentalRules | None, content: int,
                 camel: bool) -> _Seen | None:
        """The kept verdict on ``key`` for this user record and rules, if still valid."""
        seen = self._seen.get((key, user.id if user else None, camel))
        if seen is None or seen.content != content or seen.user is not user or seen.parental != parental:
            return None
        return seen

    def _keep_seen(self, key: str, user: UserRecord | None, parental: ParentalRules | None, content: int,
                   camel: bool, visible: bool, stamp: tuple[int, int] | None = None, user_data: bytes = b"") -> None:
        """Keep a verdict (see _Seen). A hidden verdict under parental rules is not kept (a cautious
        choice: it depends on the library's rating list, query._distinct_ratings, besides the row)."""
        if not visible and parental is not None:
            return
        kept = self._seen
        if len(kept) >= VERDICTS_KEPT:
            for old in list(kept)[: VERDICTS_KEPT // 4]:  # the oldest quarter
                del kept[old]
        kept[(key, user.id if user else None, camel)] = _Seen(content, user, parental, visible, stamp, user_data)

    def _row_visible(self, s: Session, row: ItemRow, viewer: Viewer) -> bool:
        """The checks of a single library row: scope, parental rules, and a private playlist's
        owner or shares (``item``, ``item_reply``)."""
        if not self._may_see(s, row, viewer):
            return False
        return row.type != "Playlist" or viewer.user_id is None or s.execute(
            select(items.c.id).where(items.c.id == row.id, playlist_visible(viewer.user_id))).first() is not None

    def _may_see(self, s: Session, row: ItemRow, viewer: Viewer) -> bool:
        if not self.visible(row, viewer):
            return False
        rules = viewer.parental
        return rules is None or item_visible(s, row.id, None, rules)

    async def viewer_user(self, auth: AuthInfo | None, user_id: str | None) -> Viewer:
        """Like ``viewer`` but a user is required (400 for an API key without userId)."""
        viewer = await self.viewer(auth, user_id)
        if viewer.user is None:
            raise BadRequestError("userId is required.")
        return viewer

    def options(self, viewer: Viewer, fields: list[str] | None = None, *, enable_images: bool | None = None,
                image_type_limit: int | None = None, enable_image_types: list[str] | None = None,
                enable_user_data: bool | None = None, all_fields: bool = False) -> DtoOptions:
        if image_type_limit is not None and image_type_limit < 0:
            raise BadRequestError("imageTypeLimit must not be negative.")
        chosen = ALL_FIELDS if all_fields else frozenset(f for f in (fields or ()) if f)
        types = frozenset(t for t in (enable_image_types or ()) if t)
        return DtoOptions(fields=chosen, enable_images=enable_images is not False,
                          image_type_limit=image_type_limit, enable_image_types=types or None,
                          enable_user_data=enable_user_data is not False, user_id=viewer.user_id,
                          can_delete=viewer.can_delete, can_download=viewer.can_download)

    def scoped(self, q: ItemQuery, viewer: Viewer) -> ItemQuery:
        q.user_id = viewer.user_id
        q.allowed_library_ids = viewer.allowed_library_ids
        if not viewer.may_watch_livetv:
            q.exclude_library_ids = set(q.exclude_library_ids) | LIVETV_LIBRARY_IDS
        q.parental = viewer.parental
        q.names = self.by_name
        return q

    # -- queries -------------------------------------------------------------------------

    async def query(self, q: ItemQuery, opts: DtoOptions) -> w.BaseItemDtoQueryResult:
        q.names = q.names or self.by_name

        def read(s: Session) -> w.BaseItemDtoQueryResult:
            rows, total = run_query(s, q, self.count_cache, self.db.generations)
            return w.BaseItemDtoQueryResult(Items=build_dtos(s, rows, opts, self.server_id),
                                            TotalRecordCount=total, StartIndex=q.start_index)

        return await self.db.read(read)

    def store_use(self, opts: DtoOptions, camel: bool, stamped: bool = True) -> StoreUse | None:
        """How a reply uses the fragment store (None when it is off). Call it *before* the read:
        the epoch is the content and configuration generations as they are now, so a write during
        the read leaves what the reply stores outdated, never stale. ``stamped`` False (the read
        has begun): what the reply stores gets no epoch, it can only be re-stamped later."""
        store = self.store
        if store is None or not store.enabled:
            return None
        epoch = store.epoch((self.db.content_generation, self.config_generation())) if stamped else 0
        return StoreUse(store, store.shape(fragment_shape(opts, self.server_id, camel)), epoch)

    def _fragment_cache(self, use: StoreUse | None) -> FragmentCache | None:
        """The in-memory cache, unless the reply can use the store's fragments of its epoch (GetItems:
        a random page anywhere is the store's, a repeated one the reply cache's); the lists whose rows
        were read before (TV, Resume: epoch 0) keep their few items in memory too."""
        return self.fragments if use is None or not use.epoch else None

    async def query_reply(self, q: ItemQuery, opts: DtoOptions, camel: bool) -> bytes:
        """``query``'s reply already encoded (``camel``: camelCase names): the page assembled
        from per-item fragments (fragments.py), without building the DTOs of unchanged items.
        With the fragment store, a page whose items all have a fragment of the current epoch reads
        the page's ids, those fragments and the viewer's user data, and nothing else."""
        # (a page of stored fragments whose ids were cached may run no statement on a session:
        # ``read_lean`` makes one only when something uses it)
        return await self.db.read_lean(self.query_reply_read(q, opts, camel))

    def query_reply_read(self, q: ItemQuery, opts: DtoOptions, camel: bool) -> Callable[[Session], bytes]:
        """``query_reply``'s read, its store epoch taken now (before the read): for
        ``Database.read_lean``, or to run inline where reads are inline (a reader process, which
        so answers a page without a turn of an event loop)."""
        q.names = q.names or self.by_name
        use = self.store_use(opts, camel)  # before the read

        def read(s: Session) -> bytes:
            if use is None:
                rows, total = run_query(s, q, self.count_cache, self.db.generations)
                return self.rows_reply(s, rows, total, q.start_index, opts, camel)
            entries, total = run_query_with(s, q, self.count_cache, self.db.generations, use.page)
            return self.rows_reply(s, entries, total, q.start_index, opts, camel, use)

        return read

    def fill_read(self, q: ItemQuery, opts: DtoOptions, camel: bool, epoch: int,
                  counts: CountCache | None = None) -> Callable[[Session], tuple[int, int]] | None:
        """A GetItems page's read for the page fill (page_fill.py): the very read of
        ``query_reply_read`` with the store, giving (the total, the reply's size in bytes). None
        when the store is off or its epoch is no longer ``epoch`` (a write: the fill's pass ends).
        ``counts``: the pass's own cache of totals and orderings (its deep pages' ordered ids go
        with the pass instead of staying in the clients' ``count_cache``); the clients' by default."""
        counts = counts if counts is not None else self.count_cache
        q.names = q.names or self.by_name
        use = self.store_use(opts, camel)  # before the read
        if use is None or use.epoch != epoch:
            return None

        def read(s: Session) -> tuple[int, int]:
            entries, total = run_query_with(s, q, counts, self.db.generations, use.page)
            if not entries:
                return total, 0
            return total, len(self.rows_reply(s, entries, total, q.start_index, opts, camel, use))

        return read

    def rows_reply(self, s: Session, rows: Sequence[ItemRow | Stored], total: int, start_index: int,
                   opts: DtoOptions, camel: bool, use: StoreUse | None = None) -> bytes:
        """A BaseItemDtoQueryResult of ``rows`` encoded from per-item fragments (in a read).
        Without ``use`` the store is still consulted (stored fragments whose digest holds are not
        rebuilt), but what this reply stores gets no epoch (the read began before one was taken)."""
        if use is None:
            use = self.store_use(opts, camel, stamped=False)
        shell = encode_wire(w.BaseItemDtoQueryResult(Items=[], TotalRecordCount=total, StartIndex=start_index), camel)
        # (warm: one join; ``use.whole``: the rows are the store's, as SQLite gave them)
        if use is not None and use.epoch and rows and (use.whole or all(r.__class__ is Stored for r in rows)):
            return stored_reply(s, rows, opts, camel, shell)  # type: ignore[arg-type]
        return splice(shell, build_fragments(s, rows, opts, self.server_id, self._fragment_cache(use), camel,
                                             store=use))

    def item_fragments(self, s: Session, rows: Sequence[ItemRow], opts: DtoOptions, camel: bool,
                       use: StoreUse | None = None) -> list[bytes]:
        """The encoded BaseItemDtos of ``rows`` (in a read, ``s``) from fragments, kept in memory or
        in the store: for a list that found its rows itself (Similar, InstantMix, playlists...);
        ``fragments.splice`` puts them into a reply. Pass ``use`` (``store_use``, taken before the
        read) so that what it stores is current for the next GetItems page."""
        if use is None:
            use = self.store_use(opts, camel, stamped=False)
        return build_fragments(s, rows, opts, self.server_id, self._fragment_cache(use), camel, store=use)

    async def latest_reply(self, q: ItemQuery, limit: int, group: bool, opts: DtoOptions, camel: bool) -> bytes:
        """``latest``'s reply (a JSON array) already encoded, from per-item fragments."""
        q.names = q.names or self.by_name

        def read(s: Session) -> bytes:
            groups = latest_groups(s, q, limit, group, self.count_cache, self.db.generations)
            return splice(b"[]", build_fragments(s, [row for row, _ in groups], opts, self.server_id,
                                                 self.fragments, camel, [count for _, count in groups]))

        return await self.db.read(read)

    async def dtos_reply(self, rows: list[ItemRow], opts: DtoOptions, camel: bool) -> bytes:
        """``dtos`` as an encoded JSON array, from per-item fragments. The rows were read before:
        what this stores gets no epoch (see ``store_use``)."""
        use = self.store_use(opts, camel, stamped=False)
        return await self.db.read(lambda s: splice(b"[]", build_fragments(s, rows, opts, self.server_id,
                                                                          self._fragment_cache(use), camel,
                                                                          store=use)))

    async def latest(self, q: ItemQuery, limit: int, group: bool, opts: DtoOptions) -> list[w.BaseItemDto]:
        """Latest media: grouped rows, ChildCount = how many new items a group holds."""
        q.names = q.names or self.by_name

        def read(s: Session) -> list[w.BaseItemDto]:
            groups = latest_groups(s, q, limit, group, self.count_cache, self.db.generations)
            dtos = build_dtos(s, [row for row, _ in groups], opts, self.server_id)
            for dto, (_, count) in zip(dtos, groups, strict=True):
                if count:
                    dto.ChildCount = count
            return dtos

        return await self.db.read(read)

    async def rows(self, q: ItemQuery) -> tuple[list[ItemRow], int]:
        q.names = q.names or self.by_name
        return await self.db.read(lambda s: run_query(s, q))

    async def dtos(self, rows: list[ItemRow], opts: DtoOptions) -> list[w.BaseItemDto]:
        return await self.db.read(lambda s: build_dtos(s, rows, opts, self.server_id))

    def visible(self, row: ItemRow, viewer: Viewer) -> bool:
        if row.library_id in LIVETV_LIBRARY_IDS and not viewer.may_watch_livetv:
            return False
        allowed = viewer.allowed_library_ids
        return allowed is None or row.library_id in allowed or row.type == "UserRootFolder"

    async def row(self, item_id: str, viewer: Viewer | None = None) -> ItemRow:
        """The item row, or 404 (also when the viewer may not see its library)."""
        key = normalize_guid(item_id)
        if key is None:
            raise NotFoundError(f"Item {item_id} not found.")
        def read(s: Session) -> ItemRow | None:
            row = get_row(s, key)
            if row is None or (viewer is not None and not self._may_see(s, row, viewer)):
                return None
            return row

        row = await self.db.read(read)
        if row is None:
            raise NotFoundError(f"Item {item_id} not found.")
        await self._check_playlist(row, viewer, item_id)
        return row

    async def _check_playlist(self, row: ItemRow | ByNameTarget, viewer: Viewer | None, item_id: str) -> None:
        """Another user's private playlist does not exist for this one (server/library/browse/playlists.py)."""
        if row.type != "Playlist" or viewer is None or viewer.user_id is None:
            return
        user_id, key = viewer.user_id, row.id

        def may_see(s: Session) -> bool:
            return s.execute(select(items.c.id).where(items.c.id == key, playlist_visible(user_id))).first() is not None

        if not await self.db.read(may_see):
            raise NotFoundError(f"Item {item_id} not found.")

    async def target(self, item_id: str, viewer: Viewer | None = None) -> ItemRow | ByNameTarget:
        """An item row, or a stand-in for a by-name item (genre, person, ...) with the
        attributes user data needs; 404 when neither exists."""
        key = normalize_guid(item_id)
        if key is None:
            raise NotFoundError(f"Item {item_id} not found.")

        def read(s: Session) -> ItemRow | ByNameTarget | None:
            row = get_row(s, key)
            if row is not None:
                return row if viewer is None or self._may_see(s, row, viewer) else None
            found = self.by_name.lookup(s, key)
            if found is None:
                return None
            return ByNameTarget(id=key, type=found[0], name=found[1])

        row = await self.db.read(read)
        if row is None or (viewer is not None and isinstance(row, ItemRow) and not self.visible(row, viewer)):
            raise NotFoundError(f"Item {item_id} not found.")
        await self._check_playlist(row, viewer, item_id)
        return row

    async def item(self, item_id: str, viewer: Viewer, opts: DtoOptions | None = None) -> w.BaseItemDto:
        """GET /Items/{id}: any item, the user root folder or a by-name item, every field."""
        key = normalize_guid(item_id)
        if key == ROOT_FOLDER_ID:
            return self.root_folder(viewer)
        if key is None:
            raise NotFoundError(f"Item {item_id} not found.")
        opts = opts or self.options(viewer, all_fields=True)

        def read_row_item(s: Session) -> w.BaseItemDto | None:
            # a library row: found, checked (scope, parental rules, private playlists) and built in
            # one read, one thread hop (the same checks as ``target``)
            row = get_row(s, key)
            if row is None:
                return None
            if not self._row_visible(s, row, viewer):
                raise NotFoundError(f"Item {item_id} not found.")
            return build_dtos(s, [row], opts, self.server_id)[0]

        built = await self.db.read(read_row_item)
        if built is not None:
            return built
        target = await self.target(item_id, viewer)
        if isinstance(target, ByNameTarget):
            opts.fields = opts.fields | {"ItemCounts", "ChildCount"}

            def read(s: Session) -> w.BaseItemDto:
                scope_q = self.scoped(ItemQuery(recursive=True), viewer)
                entry = find_name(s, target.type, target.name, scope_q)
                if entry is None:
                    entry = NameEntry(target.type, target.name, target.id)
                entry.id = target.id
                return build_name_dtos(s, [entry], opts, self.server_id)[0]

            return await self.db.read(read)
        return (await self.dtos([target], opts))[0]

    async def item_reply(self, item_id: str, viewer: Viewer, camel: bool,
                         elsewhere: ItemElsewhere | None = None) -> bytes:
        """``item``'s DTO encoded (``camel``: camelCase names), for GET /Items/{id}.

        A library row's DTO is kept in two parts. The DTO without UserData is a fragment in the
        fragment cache under the single-item shape, made from the library's content
        (``Database.content_generation``, taken before the read): any write of more than user data
        outdates it. The viewer's verdict (may they see it: libraries, parental rules, private
        playlists) and their UserData part are kept per (item, user, casing) in ``_seen``, the
        verdict while the content, the user's record and their rules are the same, the UserData
        while the user's data was not written (``Database.user_generation``). So a repeated request reads
        nothing; after a play-state write, only the user's data of the item; after a policy
        change (a new user record), a library change or an edit, everything again.

        ``elsewhere``: the read of a miss (``item_parts_read``) in a reader process
        (``ReaderPool.item``), which answers its result, or None when the owner reads it here."""
        key = normalize_guid(item_id)
        if key is None or key == ROOT_FOLDER_ID:
            return encode_wire(await self.item(item_id, viewer), camel)
        opts = self.options(viewer, all_fields=True)
        # before reading, in this order: a write meanwhile outdates what is kept
        content, stamp = self.db.content_generation, self.db.user_generation(viewer.user_id)
        user, parental = viewer.user, viewer.parental
        shape = self.fragments.shape(("item", opts.fields, opts.can_delete, opts.can_download, opts.enable_user_data,
                                      self.server_id, camel))
        deps = ("item", content)
        seen = self._seen_by(key, user, parental, content, camel)
        if seen is not None and not seen.visible:
            raise NotFoundError(f"Item {item_id} not found.")
        head = self.fragments.get(key, shape, deps) if seen is not None and seen.user_data else None
        if seen is not None and head is not None:
            if seen.stamp == stamp:
                return head + seen.user_data

            def refresh(s: Session) -> bytes | None:
                row = get_row(s, key)
                return None if row is None else user_data_part(s, row, opts, camel)

            tail = await self.db.read_driver(refresh)
            if tail is not None:
                self._keep_seen(key, user, parental, content, camel, True, stamp, tail)
                return head + tail

        built = None if elsewhere is None else await elsewhere(key, viewer, opts, camel)
        if built is None:  # (its statements are on the DB-API cursor: one pooled connection, no Session, as a rule)
            built = await self.db.read_driver(self.item_parts_read, key, viewer, opts, camel)
        if built is True:
            self._keep_seen(key, user, parental, content, camel, False)
            raise NotFoundError(f"Item {item_id} not found.")
        if not isinstance(built, tuple):  # no library row: the user root folder, a by-name item, or 404
            return encode_wire(await self.item(item_id, viewer), camel)
        head, tail = built
        self.fragments.put(key, shape, deps, head)
        self._keep_seen(key, user, parental, content, camel, True, stamp, tail)
        return head + tail

    def item_parts_read(self, s: Session, key: str, viewer: Viewer, opts: DtoOptions, camel: bool,
                        types: frozenset[str] | None = None) -> tuple[bytes, bytes] | bool | None:
        """A library row's DTO for ``item_reply``, found, checked (scope, parental rules, private
        playlists) and built in one read, as ``item``: its two parts (``item_parts``); False when
        there is no such row, True when the viewer may not see it; None when its type is not
        one of ``types`` (a reader's kinds: the caller reads it itself)."""
        row = get_row(s, key)
        if row is None:
            return False
        if types is not None and row.type not in types:
            return None
        if not self._row_visible(s, row, viewer):
            return True
        return item_parts(s, row, opts, self.server_id, camel)

    def root_folder(self, viewer: Viewer) -> w.BaseItemDto:
        return w.BaseItemDto(Name="Media Folders", ServerId=self.server_id, Id=ROOT_FOLDER_ID,
                             Type="UserRootFolder", IsFolder=True, LocationType="FileSystem", MediaType="Unknown",
                             DisplayPreferencesId=ROOT_FOLDER_ID, ImageTags={}, BackdropImageTags=[],
                             ImageBlurHashes={}, PlayAccess="Full",
                             UserData=w.UserItemDataDto(PlaybackPositionTicks=0, PlayCount=0, IsFavorite=False,
                                                        Played=False, Key=ROOT_FOLDER_ID, ItemId=ROOT_FOLDER_ID)
                             if viewer.user else None)

    def unrestricted(self, viewer: Viewer) -> Viewer:
        """The same user without folder restrictions (admin views of every library)."""
        return Viewer(None) if viewer.user is None or viewer.user.is_admin else viewer

    async def library_rows(self, viewer: Viewer) -> list[ItemRow]:
        """The CollectionFolder rows the viewer may see, in name order."""
        return await self.db.read(self._library_rows, viewer)

    def _library_rows(self, s: Session, viewer: Viewer) -> list[ItemRow]:
        q = select(items).where(items.c.type.in_(("CollectionFolder", "ManualPlaylistsFolder",  # + Playlists view
                                                  "UserView")))  # + Live TV (server/livetv/items.py)
        q = q.order_by(items.c.sort_name, items.c.name)
        return [r for r in item_rows(s.execute(q).all()) if self.visible(r, viewer)]

    # -- user data -----------------------------------------------------------------------

    async def user_data(self, user_id: str, row: ItemRow | ByNameTarget) -> w.UserItemDataDto:
        return await self.db.read(lambda s: user_data_dtos(s, [row], user_id)[row.id])

    async def update_user_data(self, user_id: str, row: ItemRow | ByNameTarget,
                               change: Callable[[UserDataRecord], None],
                               reason: str = "UpdateUserRating") -> w.UserItemDataDto:
        """Apply ``change`` to the user's data on the item (created on first use), publish
        UserDataChanged to the user's sockets and return the new UserItemDataDto. On the Core table:
        a new row is written whole (the columns' defaults, then the change), a stored one with the
        columns the change set to a new value (none: no statement)."""
        table = user_data_table
        key = (table.c.user_id == user_id, table.c.item_id == row.id)

        def write(s: Session) -> None:
            stored = s.execute(select(table).where(*key)).first()
            record = UserDataRecord(stored._mapping if stored is not None else new_user_data(user_id, row.id))
            change(record)
            if stored is None:
                s.execute(insert(table).values(**record.values()))
            else:
                changed = record.changes()
                if changed:
                    s.execute(update(table).where(*key).values(**changed))

        await self.db.write_user_data((user_id,), write)  # only this user's rows
        dto = await self.user_data(user_id, row)
        if self.events is not None:
            self.events.publish("UserDataChanged", {"UserId": user_id, "UserDataList": [
                dto]}, user_id=user_id)
        return dto

    async def views(self, viewer: Viewer, *, include_hidden: bool = False, preset: list[str] | None = None,
                    fields: list[str] | None = None) -> list[w.BaseItemDto]:
        """The viewer's libraries as CollectionFolder DTOs: the policy's folders only, without
        the user's hidden ones (MyMediaExcludes) unless asked, in the user's order.

        Kept per user and arguments while ``Database.generation`` is unchanged and the user's
        record is the same object (UserService makes a new one when the user, their policy or
        configuration changes; those writes bump the generation too): every write (user data,
        a rename, new artwork, a scan) makes the next call read again. Callers get copies."""
        key = (viewer.user_id, include_hidden, tuple(fields or ()))
        generation = self.db.generation  # taken before reading: a write during the read outdates it
        kept = self._views.get(key)
        if kept is not None and kept[0] == generation and kept[1] is viewer.user:
            return [msgspec.structs.replace(dto) for dto in kept[2]]
        opts = self.options(viewer, fields)

        def read(s: Session) -> list[w.BaseItemDto]:  # rows and DTOs in one read, one thread hop
            rows = self._library_rows(s, viewer)
            if viewer.user is not None:
                config = viewer.user.configuration
                if not include_hidden:
                    hidden = {normalize_guid(x) for x in config.MyMediaExcludes or []}
                    rows = [r for r in rows if r.id not in hidden]
                order = [normalize_guid(x) for x in config.OrderedViews or []]
                rank = {item_id: i for i, item_id in enumerate(order) if item_id}
                rows.sort(key=lambda r: (rank.get(r.id, len(rank)), (r.sort_name or r.name or "").lower()))
            return build_dtos(s, rows, opts, self.server_id)

        views = await self.db.read(read)
        if len(self._views) >= VIEWS_KEPT:
            self._views.clear()
        self._views[key] = (generation, viewer.user, views)
        return [msgspec.structs.replace(dto) for dto in views]

    async def views_reply(self, viewer: Viewer, camel: bool, *, include_hidden: bool = False,
                          fields: list[str] | None = None) -> bytes:
        """``views`` as an encoded BaseItemDtoQueryResult (GET /UserViews), the bytes kept with
        the same rule as the DTOs (generation and user record unchanged), per casing."""
        key = (viewer.user_id, include_hidden, tuple(fields or ()), camel)
        generation = self.db.generation  # before reading, as views()
        kept = self._views_bytes.get(key)
        if kept is not None and kept[0] == generation and kept[1] is viewer.user:
            return kept[2]
        views = await self.views(viewer, include_hidden=include_hidden, fields=fields)
        body = encode_wire(w.BaseItemDtoQueryResult(Items=views, TotalRecordCount=len(views), StartIndex=0), camel)
        if len(self._views_bytes) >= VIEWS_KEPT:
            self._views_bytes.clear()
        self._views_bytes[key] = (generation, viewer.user, body)
        return body

    async def counts(self, viewer: Viewer, is_favorite: bool | None) -> w.ItemCounts:
        """How many items of each kind the viewer sees (one grouped query)."""
        q = self.scoped(ItemQuery(recursive=True, is_favorite=is_favorite), viewer)
        by_type = await self.db.read(lambda s: count_by_type(s, q))
        counts = w.ItemCounts(ItemCount=0, ProgramCount=0)
        for field_name, kind in (("MovieCount", "Movie"), ("SeriesCount", "Series"), ("EpisodeCount", "Episode"),
                                 ("ArtistCount", "MusicArtist"), ("TrailerCount", "Trailer"), ("SongCount", "Audio"),
                                 ("AlbumCount", "MusicAlbum"), ("MusicVideoCount", "MusicVideo"),
                                 ("BoxSetCount", "BoxSet"), ("BookCount", "Book")):
            setattr(counts, field_name, by_type.get(kind, 0))
        counts.ItemCount = sum(n for kind, n in by_type.items() if kind not in ("MusicArtist", "Folder",
                                                                                "CollectionFolder", "Season"))
        return counts

    async def ancestors(self, item_id: str, viewer: Viewer) -> list[w.BaseItemDto]:
        """The item's parents up to its library, then the user's root folder (404 if unknown)."""
        row = await self.row(item_id, viewer)

        def read(s: Session) -> list[w.BaseItemDto]:
            chain = ancestor_ids(s, row.id)
            found = get_rows(s, chain)
            rows = [found[i] for i in chain if i in found]
            return build_dtos(s, rows, self.options(viewer, ["PrimaryImageAspectRatio", "DateCreated"]),
                              self.server_id)

        dtos = await self.db.read(read)
        return [*dtos, self.root_folder(viewer)]

    # -- items by name -------------------------------------------------------------------

    async def names(self, nq: NameQuery, opts: DtoOptions) -> w.BaseItemDtoQueryResult:
        if nq.start_index < 0 or (nq.limit is not None and nq.limit < 0):
            raise BadRequestError("startIndex and limit must not be negative.")

        nq.with_counts = opts.has("ItemCounts")
        nq.want_counts = nq.with_counts or opts.has("ChildCount") or opts.has("RecursiveItemCount")
        nq.scope.names = nq.scope.names or self.by_name
        generations = self.db.generations  # read before the first query
        nq.totals = (self.count_cache, generations)
        key = NamePages.key(nq, opts)
        if key is not None:  # (as the fragment store's epochs: a configuration save is another key)
            key = (*key, self.config_generation())

        def read(s: Session) -> w.BaseItemDtoQueryResult:
            page = self.name_pages.get(key, generations[0]) if key is not None else None
            if page is None:
                entries, total = list_names(s, nq)
                page = build_name_page(s, entries, opts, self.server_id, total)
                if key is not None:
                    self.name_pages.put(key, generations[0], page)
            return w.BaseItemDtoQueryResult(Items=with_user_data(s, page, opts), TotalRecordCount=page.total,
                                            StartIndex=nq.start_index)

        return await self.db.read(read)

    async def name(self, kind: str, name: str, viewer: Viewer, scope: ItemQuery | None = None) -> w.BaseItemDto:
        """One genre, studio, artist, person or year by name, with its item counts; 404 when the
        viewer's libraries have no item with it (a year is always answered)."""
        if not name or not name.strip():
            raise BadRequestError("A name is required.")
        q = self.scoped(scope or ItemQuery(recursive=True), viewer)
        opts = self.options(viewer, ["ItemCounts", "ChildCount", "PrimaryImageAspectRatio", "SortName"])

        def read(s: Session) -> w.BaseItemDto | None:
            entry = find_name(s, kind, name, q)
            if entry is None and kind == "Year" and name.strip().isdigit():
                year = str(int(name))
                entry = NameEntry("Year", year, ids.by_name_id("Year", year))
            if entry is None:
                return None
            return build_name_dtos(s, [entry], opts, self.server_id)[0]

        dto = await self.db.read(read)
        if dto is None:
            raise NotFoundError(f"{kind} {name!r} not found.")
        return dto

    async def collection_type_of(self, item_id: str) -> str | None:
        """The collection type of the library an item belongs to (None if unknown or mixed)."""

        def read(s: Session) -> str | None:
            lib = s.execute(select(items.c.library_id).where(items.c.id == item_id)).scalar()
            if lib is None:
                return None
            return s.execute(select(libraries.c.collection_type)
                             .where(libraries.c.id == lib)).scalar()

        return await self.db.read(read)

    async def filter_values(self, q: ItemQuery, viewer: Viewer) -> dict[str, list]:
        q = self.scoped(q, viewer)
        rules = q.parental if q.parental is not None and q.parental.active else None
        totals = (self.count_cache, self.db.generations)  # read before the first query

        def read(s: Session) -> dict[str, list[Any]]:
            # with parental rules: which (library, item type) they hide wholly, kept per content generation
            profile = parental_profile(s, rules, totals) if rules is not None else None
            # a pair partly hidden: the kept counts less the hidden items (kept the same way)
            found = facets.filter_values(s, q, profile,
                                         None if rules is None else functools.partial(filter_hidden, s, rules, totals))
            return found if found is not None else filter_values(s, q)

        return await self.db.read(read)

    async def search(self, req: SearchRequest, opts: DtoOptions) -> w.SearchHintResult:
        # a reply without user data (hints carry none, ``opts`` asks for none): kept per content
        # generation, keyed by the request (the viewer's scope and rules), the options and the
        # configuration's generation
        key = None if opts.enable_user_data else (repr(req), opts.fields, opts.enable_images, opts.image_type_limit,
                                                   opts.enable_image_types, self.config_generation())

        def read(s: Session) -> w.SearchHintResult:
            # the generations before the first query: totals and a kind's distinct names that read no
            # user data stay kept across play-state writes (CountCache), as for /Items?searchTerm
            generations = self.db.generations
            kept = self.searches.get(key, generations[0]) if key else None
            if kept is None:
                req.counts = (self.count_cache, generations)
                kept = search_hints(s, req, opts, self.server_id)
                if key is not None:
                    self.searches.put(key, generations[0], kept)
            return w.SearchHintResult(SearchHints=list(kept.SearchHints or ()), TotalRecordCount=kept.TotalRecordCount)

        return await self.db.read(read)
