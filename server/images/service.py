"""ImageService (``ctx.images``): which file an image request means, rendering it through the
disk cache, and changing item, person, by-name and user images.

Where images come from:
- library items: ``items.images_json``; a MusicArtist row adds the types its by-name folder has
  and its own entries lack;
- people: ``people.image_path`` (Primary), plus their by-name folder for other types;
- genres, music genres and studios: their by-name folder (``server/images/byname.py``);
- users: ``users.primary_image_path`` (files under ``<data>/users/<id>/``).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from server.errors import BadRequestError, ForbiddenError, NotFoundError, PayloadTooLargeError
from server.images import byname, store
from server.images.cache import ImageCache, RenderOptions
from server.library.catalog.ids import by_name_id
from server.media.images import ImageDecodeError, ImageError, ImageRequestError, image_info, image_tag
from server.metadata.image_files import NotAnImageError, image_folder, remove_replaced, save_image
from server.tasks.scheduler import Progress, interval
from server.wire import models as w

if TYPE_CHECKING:
    from server.auth.service import AuthInfo
    from server.db.database import Database
    from server.events.hub import EventHub
    from server.paths import ServerPaths
    from server.users.service import UserService

log = logging.getLogger("reelroom.images")

IMAGE_TYPES = {name.lower(): name for name in w.ENUMS["ImageType"]}
OUTPUT_FORMATS = {"jpg": "jpg", "jpeg": "jpg", "png": "png", "webp": "webp"}
MAX_UPLOAD_BYTES = 30 * 1024 * 1024
UPLOAD_PROVIDER = "Upload"  # entries with a Provider survive rescans (server/library/scan/merge.py)
LONG_CACHE = "public, max-age=31536000, immutable"
REVALIDATE = "public, no-cache"
CACHE_MAX_AGE_DAYS = 30
CACHE_MAX_BYTES = 2 * 1024 ** 3
TARGET_CACHE_SIZE = 2048  # library items' image lists kept between requests (see ImageService.item_target)


@dataclass
class Target:
    """What an image route names: a library item, a person, a by-name folder or a user."""

    kind: str  # "item", "person", "byname", "user"
    id: str
    images: list[dict[str, Any]]
    name: str | None = None
    by_name_kind: str | None = None


@dataclass(frozen=True, slots=True)
class ImageReplyData:
    status: int
    headers: list[tuple[str, str]]
    body: bytes


def image_type_of(text: str | None) -> str:
    found = IMAGE_TYPES.get((text or "").strip().lower())
    if found is None:
        raise NotFoundError(f"Unknown image type {text!r}.")
    return found


def choose_format(fmt: str | None, accept: str | None, source: str) -> tuple[str, bool]:
    """(output format, chosen from Accept): the ``format`` parameter wins; else WebP when the
    client accepts it, PNG for a PNG source (keeps transparency), else JPEG."""
    if fmt:
        chosen = OUTPUT_FORMATS.get(fmt.strip().lower())
        if chosen is None:
            raise BadRequestError(f"Unsupported image format {fmt!r}: use Jpg, Png or Webp.")
        return chosen, False
    accept = (accept or "").lower()
    if "image/webp" in accept:
        return "webp", True
    if source.lower().endswith(".png") and ("image/png" in accept or "*/*" in accept or "image/*" in accept
                                            or not accept):
        return "png", True
    return "jpg", True


def decode_upload(body: bytes) -> bytes:
    """Jellyfin clients send the file base64-encoded; raw image bytes are accepted too."""
    if not body:
        raise BadRequestError("The request body is empty: send the image (base64 or raw bytes).")
    if len(body) > MAX_UPLOAD_BYTES * 4 // 3 + 16:
        raise PayloadTooLargeError(f"Images may be at most {MAX_UPLOAD_BYTES // (1024 * 1024)} MB.")
    try:
        image_info(body)
        return body
    except ImageError:
        pass
    text = body.strip()
    if text.startswith(b"data:"):
        text = text.partition(b",")[2]
    try:
        decoded = base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError):
        raise BadRequestError("The body is neither an image nor base64 of one.") from None
    if not decoded:
        raise BadRequestError("The body is neither an image nor base64 of one.")
    return decoded


class ImageService:
    """``ctx.images``. The server context registers its cache cleanup task (``CleanImageCacheTask``)
    and closes the cache's rendering pool."""

    def __init__(self, db: Database, events: EventHub, users: UserService, paths: ServerPaths,
                 on_change: Callable[[], None] = lambda: None) -> None:
        self.db = db
        self.events = events
        self.users = users
        self.metadata_dir = paths.metadata_dir
        self.users_dir = paths.data_dir / "users"
        self.cache = ImageCache(paths.image_cache_dir, local_root=paths.data_dir)
        self.by_name_index = byname.ByNameIndex(self.metadata_dir)
        # item id -> (database generation it was read at, Target): a library item's image list
        # (items.images_json) without a database round trip while nothing was written since
        self._targets: dict[str, tuple[int, Target]] = {}
        # called after an item's images changed: a deleted upload leaves room for generated art, a
        # folder picture wins over it (the artwork service runs again soon)
        self._on_change = on_change

    # -- for other domains ---------------------------------------------------------------------

    def folder_images(self, kind: str, name: str) -> list[dict[str, Any]]:
        """Blocking (run in a thread): the images_json-style entries ({Type, Path, Tag, Index}) of
        a by-name item's folder, for ImageTags of genres, studios, people and artists; the Tag
        values are the ones image routes accept."""
        return self.by_name_index.images(kind, name)

    # -- resolving targets ------------------------------------------------------------------

    async def item_target(self, item_id: str) -> Target:
        """/Items/{itemId}/Images: a library item, a person or a by-name folder by its id.

        A library item's target (its images_json, nothing from a by-name folder) is kept in
        memory with the ``Database.content_generation`` it was read at and used while that is
        unchanged: every committed write of more than user data bumps it (a new image, a rescan,
        artwork made), so a changed item is read again, while play-state writes and devices'
        activity (a few a second under load, each of which made every target be read again) leave
        the targets kept. The generation is taken *before* the read, so a write that lands during
        the read leaves an entry that is already outdated. Callers must not change the Target
        they get."""
        generation = self.db.content_generation
        cached = self._targets.get(item_id)
        if cached is not None and cached[0] == generation:
            return cached[1]

        def read(session) -> Target | None:
            item = store.item_row(session, item_id)
            if item is not None:
                return Target("item", item_id, store.parse_images(item.images_json), name=item.name,
                              by_name_kind="MusicArtist" if item.type == "MusicArtist" else None)
            person = store.person_row(session, item_id)
            if person is not None:
                return Target("person", item_id, _person_images(person), name=person.name, by_name_kind="Person")
            return None

        target = await self.db.read(read)
        if target is None:
            art = await self.db.read(store.byname_artwork_row, item_id)
            if art is not None:
                target = Target("byname", item_id, store.parse_images(art.images_json), name=art.name,
                                by_name_kind=art.kind)
        if target is None:
            found = await asyncio.to_thread(self.by_name_index.lookup, item_id)
            if found is None:
                raise NotFoundError(f"Item {item_id} not found.")
            kind, name = found
            target = Target("byname", item_id, [], name=name, by_name_kind=kind)
        if target.kind == "item" and target.by_name_kind is None:
            self._remember(item_id, generation, target)
            return target
        return await self._with_folder(target)

    def _remember(self, item_id: str, generation: int, target: Target) -> None:
        targets = self._targets
        if len(targets) >= TARGET_CACHE_SIZE:
            stale = [k for k, (g, _t) in targets.items() if g != generation]
            for k in stale or list(targets)[: TARGET_CACHE_SIZE // 4]:  # outdated ones, else the oldest
                del targets[k]
        targets[item_id] = (generation, target)

    async def name_target(self, kind: str, name: str) -> Target:
        """/Persons|Genres|MusicGenres|Studios|Artists/{name}/Images."""
        if not name or not name.strip():
            raise NotFoundError(f"No {kind} with an empty name.")
        item_id = by_name_id(kind, name)
        if kind == "Person":
            person = await self.db.read(store.person_by_name, name)
            target = Target("person", person.id, _person_images(person), name=person.name, by_name_kind="Person") \
                if person is not None else Target("byname", item_id, [], name=name, by_name_kind=kind)
        elif kind == "MusicArtist":
            item = await self.db.read(store.item_row, item_id)
            target = Target("item", item_id, store.parse_images(item.images_json), name=item.name,
                            by_name_kind=kind) if item is not None else \
                Target("byname", item_id, [], name=name, by_name_kind=kind)
        else:
            target = Target("byname", item_id, [], name=name, by_name_kind=kind)
        if target.kind == "byname":  # a collage or cover made by server/artwork
            art = await self.db.read(store.byname_artwork_row, item_id)
            if art is not None:
                target.images = store.parse_images(art.images_json)
        return await self._with_folder(target)

    async def _with_folder(self, target: Target) -> Target:
        """Add the by-name folder's images for types the target lacks; a picture in the folder
        wins over a generated one (server/artwork), which only fills what is left."""
        if target.by_name_kind and target.name:
            folder = await asyncio.to_thread(self.by_name_index.images, target.by_name_kind, target.name)
            own = [img for img in target.images if not img.get("Generated") and not img.get("Folder")]
            have = {img["Type"] for img in own}
            merged = [*own, *({**img, "Folder": True} for img in folder if img["Type"] not in have)]
            covered = {img["Type"] for img in merged}
            target.images = [*merged, *(img for img in target.images
                                        if img.get("Generated") and img["Type"] not in covered)]
        return target

    async def user_target(self, user_id: str) -> Target:
        user = await self.users.get(user_id)  # NotFoundError for an unknown user
        path = await self.users.image_path(user_id)
        images = [{"Type": "Primary", "Path": path, "Tag": user.primary_image_tag, "Index": 0}] if path else []
        return Target("user", user_id, images, name=user.name)

    # -- serving ------------------------------------------------------------------------------

    @staticmethod
    def pick(target: Target, image_type: str, index: int | None) -> dict[str, Any]:
        typed = store.of_type(target.images, image_type)
        position = index or 0
        if position < 0 or position >= len(typed):
            if not typed:
                raise NotFoundError(f"There is no {image_type} image.")
            raise NotFoundError(f"There is no {image_type} image with index {position}.")
        return typed[position]

    async def serve(self, target: Target, image_type: str, index: int | None, *, tag: str | None,
                    fmt: str | None, accept: str | None, if_none_match: str | None, head: bool,
                    if_modified_since: str | None = None,
                    options: dict[str, Any]) -> ImageReplyData:
        image = self.pick(target, image_type, index)
        source = str(image["Path"])
        chosen, from_accept = choose_format(fmt, accept, source)
        opts = _render_options(chosen, options)
        prepared = await self.cache.lookup(source, opts, if_none_match, if_modified_since)
        headers = [("etag", prepared.etag), ("last-modified", prepared.last_modified),
                   ("cache-control", LONG_CACHE if tag and tag == image.get("Tag") else REVALIDATE)]
        if from_accept:
            headers.append(("vary", "Accept"))
        if prepared.not_modified:
            return ImageReplyData(304, headers, b"")
        body = prepared.body
        if body is None:
            try:
                body = await self.cache.render(source, opts, prepared)
            except ImageRequestError as exc:
                raise BadRequestError(str(exc)) from None
            except ImageDecodeError as exc:
                log.warning("Cannot read image %s: %s", source, exc)
                raise NotFoundError("The image file cannot be read.") from None
        headers += [("content-type", prepared.media_type), ("content-length", str(len(body)))]
        return ImageReplyData(200, headers, b"" if head else body)

    # -- infos ----------------------------------------------------------------------------------

    async def image_infos(self, item_id: str) -> list[w.ImageInfo]:
        target = await self.item_target(item_id)

        def build() -> list[w.ImageInfo]:
            infos: list[w.ImageInfo] = []
            for image_type in dict.fromkeys(img["Type"] for img in target.images):
                multiple = image_type in store.MULTIPLE_TYPES
                for i, img in enumerate(store.of_type(target.images, image_type)):
                    if not multiple and i > 0:
                        break
                    try:
                        size = os.path.getsize(img["Path"])
                    except OSError:
                        continue
                    width, height = img.get("Width"), img.get("Height")
                    if not width or not height:
                        try:
                            width, height, _fmt = image_info(img["Path"])
                        except ImageError:
                            width = height = None
                    infos.append(w.ImageInfo(ImageType=image_type, ImageIndex=i if multiple else None,
                                             ImageTag=img.get("Tag"), Path=img["Path"], BlurHash=img.get("BlurHash"),
                                             Width=width, Height=height, Size=size))
            return infos

        return await asyncio.to_thread(build)

    # -- item uploads, deletes, reorder ----------------------------------------------------

    async def set_item_image(self, item_id: str, image_type: str, index: int | None, body: bytes) -> None:
        if index is not None and index < 0:
            raise BadRequestError(f"The image index must be 0 or more, not {index}.")
        content = decode_upload(body)
        target = await self.item_target_for_change(item_id)
        if target.kind == "item":
            folder = image_folder(self.metadata_dir, item_id)
            entry = await self._save(folder, image_type, content)
            append = index is None and image_type in store.MULTIPLE_TYPES
            replaced = await self.db.write(store.store_item_image, item_id, entry, index, append)
            await asyncio.to_thread(remove_replaced, replaced, self.metadata_dir)
        elif target.kind == "person" and image_type == "Primary" and not index:
            folder = image_folder(self.metadata_dir, item_id, is_person=True)
            entry = await self._save(folder, image_type, content)
            old = await self.db.write(store.set_person_image, item_id, entry["Path"], entry["Tag"])
            if old:
                await asyncio.to_thread(remove_replaced, [old], self.metadata_dir)
        else:
            await asyncio.to_thread(self._save_by_name, target, image_type, index, content)
        self._changed(item_id)

    async def item_target_for_change(self, item_id: str) -> Target:
        try:
            return await self.item_target(item_id)
        except NotFoundError:
            found = await self.db.read(store.name_for_value_id, item_id)
            if found is None:
                raise
            kind, name = found
            return Target("byname", item_id, [], name=name, by_name_kind=kind)

    async def _save(self, folder: Path, image_type: str, content: bytes) -> dict[str, Any]:
        try:
            return await asyncio.to_thread(save_image, folder, image_type, content, UPLOAD_PROVIDER)
        except NotAnImageError as exc:
            raise BadRequestError(str(exc)) from None

    def _save_by_name(self, target: Target, image_type: str, index: int | None, content: bytes) -> None:
        base = byname.UPLOAD_NAMES.get(image_type)
        if base is None or target.by_name_kind is None or target.name is None:
            raise BadRequestError(f"{image_type} images cannot be stored for this item.")
        try:
            _w, _h, fmt = image_info(content)
        except ImageError as exc:
            raise BadRequestError(f"The upload is not a readable image: {exc}") from None
        if fmt not in ("jpg", "png", "webp", "gif", "bmp"):
            raise BadRequestError(f"Images of format {fmt!r} are not supported.")
        folder = byname.folder_for(self.metadata_dir, target.by_name_kind, target.name)
        byname.remember_name(folder, target.name)
        existing = [img for img in byname.list_images(folder) if img["Type"] == image_type]
        if image_type == "Backdrop" and (index is None or index >= len(existing)):
            used = {Path(img["Path"]).stem for img in existing}
            stem = next(s for s in (base, *(f"{base}{n}" for n in range(1, 100))) if s not in used)
            replaced = []
        elif image_type == "Backdrop":
            stem = Path(existing[index]["Path"]).stem
            replaced = [existing[index]]
        else:
            stem, replaced = base, existing
        for img in replaced:
            Path(img["Path"]).unlink(missing_ok=True)
        tmp = folder / f".{stem}.part"
        tmp.write_bytes(content)
        os.replace(tmp, folder / f"{stem}.{fmt}")

    async def delete_item_image(self, item_id: str, image_type: str, index: int | None) -> None:
        target = await self.item_target(item_id)
        image = self.pick(target, image_type, index)  # 404 when there is no such image
        if image.get("RowImage"):
            old = await self.db.write(store.set_person_image, item_id, None, None)
            if old:
                await asyncio.to_thread(remove_replaced, [old], self.metadata_dir)
        elif image.get("Generated") and target.kind == "byname":
            removed = await self.db.write(store.delete_byname_artwork, item_id)
            await asyncio.to_thread(remove_replaced, removed, self.metadata_dir)
        elif image.get("Folder"):
            typed = store.of_type(target.images, image_type)
            doomed = typed if index is None else [image]
            await asyncio.to_thread(remove_replaced, [img["Path"] for img in doomed], self.metadata_dir)
        else:
            removed = await self.db.write(store.delete_item_image, item_id, image_type, index)
            await asyncio.to_thread(remove_replaced, removed, self.metadata_dir)
        self._changed(item_id)

    async def move_item_image(self, item_id: str, image_type: str, index: int, new_index: int | None) -> None:
        if new_index is None:
            raise BadRequestError("newIndex is required.")
        target = await self.item_target(item_id)
        if target.kind != "item":
            raise BadRequestError("Only library items' images can be reordered.")
        await self.db.write(store.move_item_image, item_id, image_type, index, new_index)
        self._changed(item_id)

    def _changed(self, item_id: str) -> None:
        self._targets.pop(item_id, None)  # the write bumped the generation too; this frees it now
        self._on_change()
        self.events.publish("LibraryChanged", w.LibraryUpdateInfo(
            FoldersAddedTo=[], FoldersRemovedFrom=[], ItemsAdded=[], ItemsRemoved=[], ItemsUpdated=[item_id],
            CollectionFolders=[], IsEmpty=False))

    # -- user images -------------------------------------------------------------------------

    @staticmethod
    def user_for_change(auth: AuthInfo, user_id: str | None) -> str:
        own = auth.user_id
        wanted = user_id or own
        if wanted is None:
            raise BadRequestError("userId is required.")
        is_admin = bool(auth.user and auth.user.is_admin) or auth.is_api_key
        if wanted != own and not is_admin:
            raise ForbiddenError("Only administrators may change another user's image.")
        return wanted

    async def set_user_image(self, user_id: str, body: bytes) -> None:
        content = decode_upload(body)
        await self.users.get(user_id)
        entry = await self._save(self.users_dir / user_id, "Primary", content)
        old = await self.users.image_path(user_id)
        await self.users.set_image(user_id, entry["Path"], entry["Tag"])
        if old and old != entry["Path"]:
            await asyncio.to_thread(remove_replaced, [old], self.users_dir)

    async def delete_user_image(self, user_id: str) -> None:
        old = await self.users.image_path(user_id)
        await self.users.set_image(user_id, None, None)
        if old:
            await asyncio.to_thread(remove_replaced, [old], self.users_dir)


def _person_images(person) -> list[dict[str, Any]]:
    if not person.image_path:
        return []
    tag = person.image_tag
    if not tag:
        try:
            stat = os.stat(person.image_path)
            tag = image_tag(person.image_path, stat.st_mtime, stat.st_size)
        except OSError:
            tag = None
    return [{"Type": "Primary", "Path": person.image_path, "Tag": tag, "Index": 0, "RowImage": True}]


def _render_options(fmt: str, options: dict[str, Any]) -> RenderOptions:
    def dim(name: str) -> int | None:
        value = options.get(name)
        if value is None:
            return None
        if not 0 < value <= 16384:
            raise BadRequestError(f"{name} must be between 1 and 16384, got {value}.")
        return int(value)

    quality = options.get("quality")
    if quality is not None and not 1 <= quality <= 100:
        raise BadRequestError(f"quality must be between 1 and 100, got {quality}.")
    blur = options.get("blur")
    if blur is not None and not 0 <= blur <= 1000:
        raise BadRequestError(f"blur must be between 0 and 1000, got {blur}.")
    percent = options.get("percentPlayed")
    if percent is not None and not 0 <= percent <= 100:
        raise BadRequestError(f"percentPlayed must be between 0 and 100, got {percent}.")
    unplayed = options.get("unplayedCount")
    if unplayed is not None and unplayed < 0:
        raise BadRequestError(f"unplayedCount must not be negative, got {unplayed}.")
    background = options.get("backgroundColor") or None
    if background:
        from server.media.images import _parse_color

        try:
            _parse_color(background)
        except ImageRequestError as exc:
            raise BadRequestError(str(exc)) from None
    return RenderOptions(
        fmt=fmt, max_width=dim("maxWidth"), max_height=dim("maxHeight"), width=dim("width"), height=dim("height"),
        fill_width=dim("fillWidth"), fill_height=dim("fillHeight"), quality=quality or 90, blur=blur or None,
        background_color=background, foreground_layer=options.get("foregroundLayer") or None,
        percent_played=percent or None, unplayed_count=unplayed or None)


@dataclass
class CleanImageCacheTask:
    service: ImageService
    key: str = "DeleteCacheFiles"
    name: str = "Clean Cache Directory"
    description: str = ("Deletes resized images unused for 30 days, then the least recently used "
                        "ones while the image cache is over 2 GB.")
    category: str = "Maintenance"
    is_hidden: bool = False
    default_triggers: list[w.TaskTriggerInfo] = field(default_factory=lambda: [interval(24)])

    async def run(self, progress: Progress) -> None:
        deleted, kept = await asyncio.to_thread(self.service.cache.clean, CACHE_MAX_AGE_DAYS, CACHE_MAX_BYTES)
        log.info("Image cache: %d files deleted, %d bytes kept", deleted, kept)
        progress(100)
