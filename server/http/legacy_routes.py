"""User-scoped routes that Jellyfin 10.10 still answers but no longer lists in its OpenAPI
document (its controllers keep them as hidden, obsolete aliases). Real clients call them:
jellyfin-apiclient-python (the Kodi add-on, jellyfin-mpv-shim) asks for
``/Users/{userId}/Items/{itemId}``, older apps for ``/Users/{userId}/Views``.

``rewrite(path)`` maps such a path to the spec route that does the same thing and returns the
user id to pass as the ``userId`` query parameter, so no handler needs to know about them.
"""

from __future__ import annotations

import re

_SEG = r"([^/]+)"
# (pattern after /Users/{userId}, replacement); the first match wins.
_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p, re.IGNORECASE), r) for p, r in (
        (r"^/Items/?$", "/Items"),
        (r"^/Items/Resume/?$", "/UserItems/Resume"),
        (r"^/Items/Latest/?$", "/Items/Latest"),
        (r"^/Items/Root/?$", "/Items/Root"),
        (rf"^/Items/{_SEG}/Intros/?$", r"/Items/\1/Intros"),
        (rf"^/Items/{_SEG}/LocalTrailers/?$", r"/Items/\1/LocalTrailers"),
        (rf"^/Items/{_SEG}/SpecialFeatures/?$", r"/Items/\1/SpecialFeatures"),
        (rf"^/Items/{_SEG}/Rating/?$", r"/UserItems/\1/Rating"),
        (rf"^/Items/{_SEG}/UserData/?$", r"/UserItems/\1/UserData"),
        (rf"^/Items/{_SEG}/?$", r"/Items/\1"),
        (rf"^/FavoriteItems/{_SEG}/?$", r"/UserFavoriteItems/\1"),
        (rf"^/PlayedItems/{_SEG}/?$", r"/UserPlayedItems/\1"),
        (rf"^/PlayingItems/{_SEG}/Progress/?$", r"/PlayingItems/\1/Progress"),
        (rf"^/PlayingItems/{_SEG}/?$", r"/PlayingItems/\1"),
        (r"^/Views/?$", "/UserViews"),
        (r"^/GroupingOptions/?$", "/UserViews/GroupingOptions"),
        (r"^/Suggestions/?$", "/Items/Suggestions"),
    )
]
_USERS = re.compile(r"^/Users/([^/]+)(/.*)$", re.IGNORECASE)


def rewrite(path: str) -> tuple[str, str] | None:
    """(spec path, user id) for a legacy user-scoped path, else None."""
    match = _USERS.match(path)
    if match is None:
        return None
    user_id, rest = match.group(1), match.group(2)
    for pattern, replacement in _RULES:
        if pattern.match(rest):
            return pattern.sub(replacement, rest), user_id
    return None
