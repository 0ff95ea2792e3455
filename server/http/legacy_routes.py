"""Jellyfin's pre-10.9 user routes, still served (though hidden from its OpenAPI document) and
still used by real clients (jellyfin-apiclient-python, the Kodi add-on, older apps):
``/Users/{userId}/Items``, ``/Users/{userId}/Views``, ``/Users/{userId}/FavoriteItems/{id}``, ...

Each is rewritten, before routing, to the current operation's path with ``userId`` moved into
the query string, so the current handler (and its authorization) serves both spellings."""

from __future__ import annotations

import re

from server.http.routing import RouteIndex

_GUID = re.compile(r"[0-9a-fA-F]{32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")

# (legacy template, current template); methods are the current operation's.
LEGACY_ROUTES: tuple[tuple[str, str], ...] = (
    ("/Users/{userId}/Items", "/Items"),
    ("/Users/{userId}/Items/Root", "/Items/Root"),
    ("/Users/{userId}/Items/Latest", "/Items/Latest"),
    ("/Users/{userId}/Items/Resume", "/UserItems/Resume"),
    ("/Users/{userId}/Items/{itemId}", "/Items/{itemId}"),
    ("/Users/{userId}/Items/{itemId}/Intros", "/Items/{itemId}/Intros"),
    ("/Users/{userId}/Items/{itemId}/LocalTrailers", "/Items/{itemId}/LocalTrailers"),
    ("/Users/{userId}/Items/{itemId}/SpecialFeatures", "/Items/{itemId}/SpecialFeatures"),
    ("/Users/{userId}/Items/{itemId}/Rating", "/UserItems/{itemId}/Rating"),
    ("/Users/{userId}/Items/{itemId}/UserData", "/UserItems/{itemId}/UserData"),
    ("/Users/{userId}/FavoriteItems/{itemId}", "/UserFavoriteItems/{itemId}"),
    ("/Users/{userId}/PlayedItems/{itemId}", "/UserPlayedItems/{itemId}"),
    ("/Users/{userId}/PlayingItems/{itemId}", "/PlayingItems/{itemId}"),
    ("/Users/{userId}/PlayingItems/{itemId}/Progress", "/PlayingItems/{itemId}/Progress"),
    ("/Users/{userId}/Views", "/UserViews"),
    ("/Users/{userId}/GroupingOptions", "/UserViews/GroupingOptions"),
    ("/Users/{userId}/Suggestions", "/Items/Suggestions"),
)

# Legacy routes for one method only: the same path answers other methods with a spec route
# (GET and DELETE /Users/{userId} are GetUserById and DeleteUser). jellyfin-web 10.10.7 still
# saves a user, its password and its settings through these.
LEGACY_METHOD_ROUTES: tuple[tuple[str, str, str], ...] = (
    ("POST", "/Users/{userId}", "/Users"),
    ("POST", "/Users/{userId}/Password", "/Users/Password"),
    ("POST", "/Users/{userId}/Configuration", "/Users/Configuration"),
)

_INDEX = RouteIndex()
_TARGETS: dict[str, str] = {}
for _legacy, _current in LEGACY_ROUTES:
    _INDEX.add(_legacy)
    _TARGETS[_legacy] = _current
_METHOD_INDEX: dict[str, RouteIndex] = {}
_METHOD_TARGETS: dict[tuple[str, str], str] = {}
for _method, _legacy, _current in LEGACY_METHOD_ROUTES:
    _METHOD_INDEX.setdefault(_method, RouteIndex()).add(_legacy)
    _METHOD_TARGETS[(_method, _legacy)] = _current


def rewrite(path: str, pairs: list[tuple[str, str]], method: str | None = None) -> tuple[str, list[tuple[str, str]]]:
    """The current path and query for a legacy one (anything else is returned unchanged)."""
    if not path[:7].lower() == "/users/":
        return path, pairs
    match = _INDEX.match(path)
    target = _TARGETS[match.template] if match is not None else None
    if match is None and method is not None and method.upper() in _METHOD_INDEX:
        match = _METHOD_INDEX[method.upper()].match(path)
        # Only a real id: POST /Users/New, /Users/Password, /Users/AuthenticateByName ... are spec routes.
        if match is not None and not _GUID.fullmatch(match.path_params.get("userId", "")):
            match = None
        if match is not None:
            target = _METHOD_TARGETS[(method.upper(), match.template)]
    if match is None or target is None:
        return path, pairs
    params = dict(match.path_params)
    user_id = params.pop("userId")
    for name, value in params.items():
        target = target.replace("{" + name + "}", value)
    if not any(k.lower() == "userid" for k, _ in pairs):
        pairs = [*pairs, ("userId", user_id)]
    return target, pairs
