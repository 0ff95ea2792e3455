"""Which caller may run which operation: the spec's security scopes, checked in one place."""

from __future__ import annotations

from server.auth.service import AuthInfo
from server.errors import ForbiddenError, UnauthorizedError

FIRST_TIME_SETUP = {"FirstTimeSetupOrElevated", "FirstTimeSetupOrDefault", "FirstTimeSetupOrIgnoreParentalControl"}

# scope -> (policy flag that grants it, the permission's name in the 403 message)
_POLICY_FLAGS = {
    "CollectionManagement": ("EnableCollectionManagement", "collection management"),
    "SubtitleManagement": ("EnableSubtitleManagement", "subtitle management"),
    "LyricManagement": ("EnableLyricManagement", "lyric management"),
    "Download": ("EnableContentDownloading", "download"),
    "LiveTvAccess": ("EnableLiveTvAccess", "Live TV access"),
    "LiveTvManagement": ("EnableLiveTvManagement", "Live TV management"),
}


def check_access(requires_auth: bool, scopes: tuple[str, ...], auth: AuthInfo | None, *,
                 wizard_completed: bool, is_local: bool) -> None:
    """Raise 401 (no or bad token) or 403 (lacking permission, named) unless allowed."""
    if not requires_auth:
        return
    if not wizard_completed and FIRST_TIME_SETUP & set(scopes):
        return
    if auth is None:
        raise UnauthorizedError("A valid access token is required.")
    user = auth.user
    if user is not None and user.is_disabled:
        raise ForbiddenError(f"The user {user.name} is disabled.")
    scope_set = set(scopes)
    if "LocalAccessOrRequiresElevation" in scope_set:
        if not (is_local or auth.is_admin):
            raise ForbiddenError("This operation requires local network access or elevation (administrator).")
        return
    if scope_set & {"RequiresElevation", "FirstTimeSetupOrElevated"} and not auth.is_admin:
        raise ForbiddenError("This operation requires elevation (administrator).")
    if auth.is_api_key or user is None:
        return
    for scope in scope_set:
        flag = _POLICY_FLAGS.get(scope)
        if flag and not (user.is_admin or getattr(user.policy, flag[0])):
            raise ForbiddenError(f"This operation requires the {flag[1]} permission.")
    if scope_set & {"SyncPlayHasAccess", "SyncPlayCreateGroup", "SyncPlayJoinGroup", "SyncPlayIsInGroup"}:
        access = user.policy.SyncPlayAccess or "None"
        if access == "None":
            raise ForbiddenError("This operation requires the SyncPlay permission.")
        if "SyncPlayCreateGroup" in scope_set and access != "CreateAndJoinGroups":
            raise ForbiddenError("This operation requires the SyncPlay create-group permission.")
