"""Collection: BoxSets and their members (server/library/browse/boxsets.py)."""

from __future__ import annotations

from server.api.base import operation
from server.api.params import guids
from server.context import ServerContext
from server.guid import parse_guid
from server.wire import models as w


@operation("CreateCollection")
async def create_collection(ctx: ServerContext, name: str | None = None, ids: list[str] | None = None,
                            parentId: str | None = None, isLocked: bool | None = None) -> w.CollectionCreationResult:
    collection_id = await ctx.browse.collections.create(name, guids(ids, "ids"), isLocked)
    return w.CollectionCreationResult(Id=collection_id)


@operation("AddToCollection")
async def add_to_collection(ctx: ServerContext, collectionId: str, ids: list[str] | None = None) -> None:
    await ctx.browse.collections.add(parse_guid(collectionId, "collectionId"), guids(ids, "ids"))


@operation("RemoveFromCollection")
async def remove_from_collection(ctx: ServerContext, collectionId: str, ids: list[str] | None = None) -> None:
    await ctx.browse.collections.remove(parse_guid(collectionId, "collectionId"), guids(ids, "ids"))
