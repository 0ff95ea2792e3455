"""Artwork files next to media ("poster.jpg", "Movie (2020)-fanart.jpg", "season01-poster.jpg")."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from server.library.scan.naming.extensions import SIDECAR_IMAGE_EXTENSIONS, as_media_path
from server.library.scan.naming.kinds import ImageType


@dataclass(frozen=True, slots=True)
class SidecarImage:
    """An artwork file's ImageType; ``index`` orders backdrops ("fanart-2" is 2); ``season`` is set
    for season artwork kept in the series folder ("season02-poster.jpg", "season-specials-poster.jpg")."""

    image_type: ImageType
    index: int = 0
    season: int | None = None


_NAMES: dict[str, ImageType] = {
    "poster": ImageType.PRIMARY,
    "folder": ImageType.PRIMARY,
    "cover": ImageType.PRIMARY,
    "default": ImageType.PRIMARY,
    "movie": ImageType.PRIMARY,
    "show": ImageType.PRIMARY,
    "jacket": ImageType.PRIMARY,
    "fanart": ImageType.BACKDROP,
    "background": ImageType.BACKDROP,
    "backdrop": ImageType.BACKDROP,
    "art": ImageType.BACKDROP,
    "banner": ImageType.BANNER,
    "logo": ImageType.LOGO,
    "clearlogo": ImageType.LOGO,
    "clearart": ImageType.ART,
    "thumb": ImageType.THUMB,
    "landscape": ImageType.THUMB,
    "disc": ImageType.DISC,
    "cdart": ImageType.DISC,
    "discart": ImageType.DISC,
    "box": ImageType.BOX,
    "boxrear": ImageType.BOX_REAR,
    "back": ImageType.BOX_REAR,
    "menu": ImageType.MENU,
}
_NUMBERED_RE = re.compile(r"^(?P<base>fanart|background|backdrop|art)-?(?P<index>\d{1,2})$")
_SEASON_RE = re.compile(
    r"^season(?:(?P<number>\d{1,4})|-(?P<specials>specials))-(?P<kind>poster|fanart|banner|landscape|thumb)$"
)
_SEASON_KINDS = {
    "poster": ImageType.PRIMARY,
    "fanart": ImageType.BACKDROP,
    "banner": ImageType.BANNER,
    "landscape": ImageType.THUMB,
    "thumb": ImageType.THUMB,
}


def _match_name(name: str) -> SidecarImage | None:
    if name in _NAMES:
        return SidecarImage(_NAMES[name])
    numbered = _NUMBERED_RE.match(name)
    if numbered:
        return SidecarImage(_NAMES[numbered.group("base")], index=int(numbered.group("index")))
    return None


def classify_sidecar_image(
    path: str | os.PathLike[str], item_stem: str | None = None, *, episode: bool = False
) -> SidecarImage | None:
    """The ImageType of an artwork file, or None when the name is not an artwork name.

    ``item_stem`` is the media file name without extension; with it, prefixed names
    ("Movie (2020)-poster.jpg") and an image named exactly like the media file (Primary) are
    recognised. With ``episode``, "<episode>-thumb.jpg" is the episode's Primary image, as
    Kodi and Jellyfin treat it.
    """
    p = as_media_path(path)
    if p.suffix.lower() not in SIDECAR_IMAGE_EXTENSIONS:
        return None
    stem = p.stem.lower()

    if item_stem:
        prefix = item_stem.lower()
        if stem == prefix:
            return SidecarImage(ImageType.PRIMARY)
        for joiner in ("-", ".", "_"):
            if stem.startswith(prefix + joiner):
                rest = stem[len(prefix) + 1 :]
                if episode and rest == "thumb":
                    return SidecarImage(ImageType.PRIMARY)
                found = _match_name(rest)
                if found is not None:
                    return found

    season = _SEASON_RE.match(stem)
    if season:
        number = 0 if season.group("specials") else int(season.group("number"))
        return SidecarImage(_SEASON_KINDS[season.group("kind")], season=number)

    return _match_name(stem)
