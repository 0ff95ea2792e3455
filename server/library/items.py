"""ItemService (``ctx.items``): the query engine and DTO builder behind the browse endpoints.

Handlers resolve the caller into a ``Viewer`` (user id, the libraries they may see, policy
flags), fill an ``ItemQuery`` and call ``query``; every read runs on the database's reader
pool in one session (rows, count and the DTO batch lookups together).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from server.auth.service import AuthInfo
from server.db.database import Database
from server.errors import BadRequestError, NotFoundError
from server.guid import normalize_guid
from server.library.dto import DtoOptions, build_dtos
from server.library.query import ROOT_FOLDER_ID, ItemQuery, get_row, items, run_query
from server.users.service import UserRecord, UserService
from server.wire import models as w

ALL_FIELDS = frozenset(("Chapters", "ChildCount", "DateCreated", "Etag", "ExternalUrls", "Genres", "MediaSourceCount",
                        "MediaSources", "MediaStreams", "OriginalTitle", "Overview", "ParentId", "Path", "People",
                        "PrimaryImageAspectRatio", "ProviderIds", "RecursiveItemCount", "SortName", "Studios",
                        "Taglines", "Tags", "CanDelete", "CanDownload", "LocalTrailerCount", "SpecialFeatureCount",
                        "RemoteTrailers", "ProductionLocations", "Width", "Height", "IsHD", "SeriesStudio",
                        "LockedFields"))


@dataclass(frozen=True)
class Viewer:
    """Whose view of the library a request gets."""

    user: UserRecord | None

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
        return frozenset(i for i in (normalize_guid(f) for f in (policy.EnabledFolders or [])) if i)

    @property
    def can_delete(self) -> bool:
        if self.user is None:
            return True
        p = self.user.policy
        return bool(p.EnableContentDeletion) or bool(p.EnableContentDeletionFromFolders)

    @property
    def can_download(self) -> bool:
        return self.user is None or self.user.policy.EnableContentDownloading is not False


class ItemService:
    def __init__(self, db: Database, users: UserService, server_id: str) -> None:
        self.db = db
        self.users = users
        self.server_id = server_id

    async def viewer(self, auth: AuthInfo | None, user_id: str | None) -> Viewer:
        """The user named by ``userId`` (404 if unknown; only admins may name another user),
        else the caller; an API key without userId sees everything."""
        if user_id:
            target = normalize_guid(user_id)
            if target is None:
                raise BadRequestError(f"userId is not a valid GUID: {user_id!r}")
            user = await self.users.get(target)
            return Viewer(user)
        if auth is not None and auth.user is not None:
            return Viewer(await self.users.get(auth.user.id))
        return Viewer(None)

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
        return q

    # -- queries -------------------------------------------------------------------------

    async def query(self, q: ItemQuery, opts: DtoOptions) -> w.BaseItemDtoQueryResult:
        def read(s: Session) -> w.BaseItemDtoQueryResult:
            rows, total = run_query(s, q)
            return w.BaseItemDtoQueryResult(Items=build_dtos(s, rows, opts, self.server_id),
                                            TotalRecordCount=total, StartIndex=q.start_index)

        return await self.db.read(read)

    async def rows(self, q: ItemQuery) -> tuple[list[Any], int]:
        return await self.db.read(lambda s: run_query(s, q))

    async def dtos(self, rows: list[Any], opts: DtoOptions) -> list[w.BaseItemDto]:
        return await self.db.read(lambda s: build_dtos(s, rows, opts, self.server_id))

    def visible(self, row: Any, viewer: Viewer) -> bool:
        allowed = viewer.allowed_library_ids
        return allowed is None or row.library_id in allowed or row.type == "UserRootFolder"

    async def row(self, item_id: str, viewer: Viewer | None = None) -> Any:
        """The item row, or 404 (also when the viewer may not see its library)."""
        key = normalize_guid(item_id)
        if key is None:
            raise NotFoundError(f"Item {item_id} not found.")
        row = await self.db.read(lambda s: get_row(s, key))
        if row is None or (viewer is not None and not self.visible(row, viewer)):
            raise NotFoundError(f"Item {item_id} not found.")
        return row

    async def item(self, item_id: str, viewer: Viewer, opts: DtoOptions | None = None) -> w.BaseItemDto:
        key = normalize_guid(item_id)
        if key == ROOT_FOLDER_ID:
            return self.root_folder(viewer)
        row = await self.row(item_id, viewer)
        opts = opts or self.options(viewer, all_fields=True)
        return (await self.dtos([row], opts))[0]

    def root_folder(self, viewer: Viewer) -> w.BaseItemDto:
        return w.BaseItemDto(Name="Media Folders", ServerId=self.server_id, Id=ROOT_FOLDER_ID,
                             Type="UserRootFolder", IsFolder=True, LocationType="FileSystem", MediaType="Unknown",
                             DisplayPreferencesId=ROOT_FOLDER_ID, ImageTags={}, BackdropImageTags=[],
                             ImageBlurHashes={}, PlayAccess="Full",
                             UserData=w.UserItemDataDto(PlaybackPositionTicks=0, PlayCount=0, IsFavorite=False,
                                                        Played=False, Key=ROOT_FOLDER_ID, ItemId=ROOT_FOLDER_ID)
                             if viewer.user else None)

    async def library_rows(self, viewer: Viewer) -> list[Any]:
        """The CollectionFolder rows the viewer may see, in name order."""
        def read(s: Session) -> list[Any]:
            q = select(items).where(items.c.type == "CollectionFolder").order_by(items.c.sort_name, items.c.name)
            return [r for r in s.execute(q).all()]

        return [r for r in await self.db.read(read) if self.visible(r, viewer)]
