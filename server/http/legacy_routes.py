"""Jellyfin's user-scoped routes from before 10.9 (``/Users/{userId}/Items/...``), which
Jellyfin 10.10 still serves, hidden from its API document, and which older clients and
jellyfin-apiclient-python (Kodi, mpv-shim) call. Each is rewritten to the spec route with the
user id as the ``userId`` query parameter, before routing, so the spec handler and all of the
wire normalization apply unchanged.
"""

from __future__ import annotations

import re

_USER = r"^/users/(?P<user>[^/]+)"
_ALIASES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(_USER + pattern + "$", re.IGNORECASE), target)
                                                          for pattern, target in (
    ("/items", "/Items"),
    ("/items/latest", "/Items/Latest"),
    ("/items/resume", "/UserItems/Resume"),
    ("/items/root", "/Items/Root"),
    ("/items/(?P<item>[^/]+)/intros", "/Items/{item}/Intros"),
    ("/items/(?P<item>[^/]+)/localtrailers", "/Items/{item}/LocalTrailers"),
    ("/items/(?P<item>[^/]+)/specialfeatures", "/Items/{item}/SpecialFeatures"),
    ("/items/(?P<item>[^/]+)/userdata", "/UserItems/{item}/UserData"),
    ("/items/(?P<item>[^/]+)/rating", "/UserItems/{item}/Rating"),
    ("/items/(?P<item>[^/]+)", "/Items/{item}"),
    ("/views", "/UserViews"),
    ("/groupingoptions", "/UserViews/GroupingOptions"),
    ("/favoriteitems/(?P<item>[^/]+)", "/UserFavoriteItems/{item}"),
    ("/playeditems/(?P<item>[^/]+)", "/UserPlayedItems/{item}"),
    ("/playingitems/(?P<item>[^/]+)", "/PlayingItems/{item}"),
    ("/playingitems/(?P<item>[^/]+)/progress", "/PlayingItems/{item}/Progress"),
    ("/suggestions", "/Items/Suggestions"),
))


def rewrite(path: str) -> tuple[str, str] | None:
    """(spec path, user id) for a legacy user-scoped path, else None."""
    if not path[:7].lower() == "/users/":
        return None
    for pattern, target in _ALIASES:
        m = pattern.match(path)
        if m:
            item = m.groupdict().get("item")
            return (target.replace("{item}", item) if item else target), m.group("user")
    return None
