"""Search hints: items, artists, genres, studios and people whose names match a term."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from server.library.catalog.by_name import NameQuery, build_name_dtos, list_names
from server.library.catalog.dto import DtoOptions, build_dtos
from server.library.catalog.query import Generations, ItemQuery, run_query
from server.wire import models as w

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


@dataclass
class SearchRequest:
    term: str
    scope: ItemQuery
    start_index: int = 0
    limit: int | None = None
    include_media: bool = True
    include_people: bool = True
    include_genres: bool = True
    include_studios: bool = True
    include_artists: bool = True
    #: (CountCache, ``Database.generations`` read before the first query): totals (and a kind's
    #: distinct names) kept while nothing they read was written, as for /Items?searchTerm
    counts: tuple[Any, Generations] | None = field(default=None, repr=False, compare=False)


def _hint(dto: w.BaseItemDto, term: str) -> w.SearchHint:
    tags = dto.ImageTags or {}
    hint = w.SearchHint(
        ItemId=dto.Id, Id=dto.Id, Name=dto.Name, MatchedTerm=term, IndexNumber=dto.IndexNumber,
        ProductionYear=dto.ProductionYear, ParentIndexNumber=dto.ParentIndexNumber, Type=dto.Type,
        IsFolder=dto.IsFolder, RunTimeTicks=dto.RunTimeTicks, MediaType=dto.MediaType, EndDate=dto.EndDate,
        Series=dto.SeriesName, Status=dto.Status, Album=dto.Album, AlbumId=dto.AlbumId,
        AlbumArtist=dto.AlbumArtist, Artists=dto.Artists or [], ChannelId=dto.ChannelId,
        PrimaryImageAspectRatio=dto.PrimaryImageAspectRatio, PrimaryImageTag=tags.get("Primary"),
    )
    if "Thumb" in tags:
        hint.ThumbImageTag, hint.ThumbImageItemId = tags["Thumb"], dto.Id
    elif dto.ParentThumbImageTag:
        hint.ThumbImageTag, hint.ThumbImageItemId = dto.ParentThumbImageTag, dto.ParentThumbItemId
    if dto.BackdropImageTags:
        hint.BackdropImageTag, hint.BackdropImageItemId = dto.BackdropImageTags[0], dto.Id
    elif dto.ParentBackdropImageTags:
        hint.BackdropImageTag, hint.BackdropImageItemId = dto.ParentBackdropImageTags[0], dto.ParentBackdropItemId
    if dto.Type == "MusicAlbum" or dto.Type == "MusicArtist":
        hint.SongCount = dto.SongCount
    if dto.Type == "Series":
        hint.EpisodeCount = dto.EpisodeCount
    return hint


def search_hints(s: Session, req: SearchRequest, opts: DtoOptions, server_id: str) -> w.SearchHintResult:
    """Media first (exact, then prefix, then other matches), then artists, genres, studios and
    people; the page is cut from that combined order."""
    wanted = None if req.limit is None else req.start_index + req.limit
    hints: list[w.SearchHint] = []
    total = 0
    opts.fields = opts.fields | {"PrimaryImageAspectRatio"}
    if req.include_media:
        q = req.scope
        q.search_term = req.term
        q.recursive = True
        q.sort_by, q.sort_order = ["SearchScore"], ["Ascending"]
        q.start_index, q.limit = 0, wanted
        rows, count = run_query(s, q, *req.counts) if req.counts is not None else run_query(s, q)
        total += count
        hints.extend(_hint(d, req.term) for d in build_dtos(s, rows, opts, server_id))
    name_kinds = [k for k, on in (("MusicArtist", req.include_artists), ("Genre", req.include_genres),
                                  ("Studio", req.include_studios), ("Person", req.include_people)) if on]
    for kind in name_kinds:
        # the viewer's whole scope: libraries, Live TV, and parental rules (a name is listed only
        # with an item they may see)
        scope = ItemQuery(recursive=True, user_id=req.scope.user_id,
                          allowed_library_ids=req.scope.allowed_library_ids,
                          exclude_library_ids=set(req.scope.exclude_library_ids), parental=req.scope.parental)
        nq = NameQuery(kind=kind, scope=scope, search_term=req.term, limit=wanted, totals=req.counts,
                       with_counts=opts.has("ItemCounts"),
                       want_counts=opts.has("ItemCounts") or opts.has("ChildCount") or opts.has("RecursiveItemCount"))
        entries, count = list_names(s, nq)
        total += count
        hints.extend(_hint(d, req.term) for d in build_name_dtos(s, entries, opts, server_id))
    end = None if req.limit is None else req.start_index + req.limit
    return w.SearchHintResult(SearchHints=hints[req.start_index:end], TotalRecordCount=total)
