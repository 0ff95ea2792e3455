"""Users: creation, naming rules, passwords, policies, sign-in with lockout.

Every read and write here is a Core statement on ``server/db/schema.py``'s ``users`` table (no ORM
class: a sign-in, the wizard and every token's first lookup come through here, and would load
SQLModel, pydantic and the ORM for the process's life). A change writes only the columns whose
value it changed, as the ORM's unit of work did (``_update``): a sign-in's ``UPDATE users SET
last_login_date=..., last_activity_date=... WHERE ...`` stays a session write
(``server/db/database.py``'s ``_SESSION_WRITE``)."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec
from sqlalchemy import delete, func, insert, select, update

from server.db import schema
from server.db.database import Database
from server.db.records import Record
from server.db.schema import utcnow
from server.errors import BadRequestError, NotFoundError, UnauthorizedError
from server.guid import new_guid
from server.users.passwords import hash_password_async, verify_password_async
from server.wire import models as w

if TYPE_CHECKING:
    from collections.abc import Callable

    from sqlalchemy.engine import Row

    from server.db.database import CoreSession

_users = schema.users

log = logging.getLogger("reelroom.users")

# Jellyfin's rule: word characters, space, - ' . _ @ +, not starting or ending with a space.
_VALID_NAME = re.compile(r"^(?!\s)[\w \-'._@+]+(?<!\s)$")


def validate_user_name(name: str | None) -> str:
    if name is None or not name.strip():
        raise BadRequestError("A user name is required.")
    if not _VALID_NAME.match(name):
        raise BadRequestError(
            "User names may contain letters, digits, spaces and - ' . _ @ +, and may not start or end with a space.")
    return name


def default_policy(is_admin: bool) -> w.UserPolicy:
    return w.UserPolicy(
        IsAdministrator=is_admin, IsHidden=True, EnableCollectionManagement=is_admin,
        EnableSubtitleManagement=is_admin, EnableLyricManagement=is_admin, IsDisabled=False, BlockedTags=[],
        AllowedTags=[], EnableUserPreferenceAccess=True, AccessSchedules=[], BlockUnratedItems=[],
        EnableRemoteControlOfOtherUsers=is_admin, EnableSharedDeviceControl=True, EnableRemoteAccess=True,
        EnableLiveTvManagement=is_admin, EnableLiveTvAccess=True, EnableMediaPlayback=True,
        EnableAudioPlaybackTranscoding=True, EnableVideoPlaybackTranscoding=True, EnablePlaybackRemuxing=True,
        ForceRemoteSourceTranscoding=False, EnableContentDeletion=is_admin, EnableContentDeletionFromFolders=[],
        EnableContentDownloading=True, EnableSyncTranscoding=True, EnableMediaConversion=True, EnabledDevices=[],
        EnableAllDevices=True, EnabledChannels=[], EnableAllChannels=True, EnabledFolders=[],
        EnableAllFolders=True, InvalidLoginAttemptCount=0, LoginAttemptsBeforeLockout=-1, MaxActiveSessions=0,
        EnablePublicSharing=True, BlockedMediaFolders=[], BlockedChannels=[], RemoteClientBitrateLimit=0,
        AuthenticationProviderId="Jellyfin.Server.Implementations.Users.DefaultAuthenticationProvider",
        PasswordResetProviderId="Jellyfin.Server.Implementations.Users.DefaultPasswordResetProvider",
        SyncPlayAccess="CreateAndJoinGroups",
    )


# The policy properties the spec marks nullable: null in a policy POST clears them (no rating
# limit, an empty list), where a property left out keeps its stored value.
CLEARABLE_POLICY_FIELDS = frozenset({
    "MaxParentalRating", "BlockedTags", "AllowedTags", "AccessSchedules", "BlockUnratedItems",
    "EnableContentDeletionFromFolders", "EnabledDevices", "EnabledChannels", "EnabledFolders",
    "BlockedMediaFolders", "BlockedChannels",
})


def default_user_configuration() -> w.UserConfiguration:
    return w.UserConfiguration(
        AudioLanguagePreference="", PlayDefaultAudioTrack=True, SubtitleLanguagePreference="",
        DisplayMissingEpisodes=False, GroupedFolders=[], SubtitleMode="Default", DisplayCollectionsView=False,
        EnableLocalPassword=False, OrderedViews=[], LatestItemsExcludes=[], MyMediaExcludes=[],
        HidePlayedInLatest=True, RememberAudioSelections=True, RememberSubtitleSelections=True,
        EnableNextEpisodeAutoPlay=True, CastReceiverId="F007D354",
    )


class UserRow(Record):
    """A user's row to change in ``UserService._update`` (its columns as attributes)."""

    id: str
    name: str
    password_hash: str | None
    policy_json: str
    configuration_json: str
    date_created: datetime
    last_login_date: datetime | None
    last_activity_date: datetime | None
    invalid_login_attempts: int
    primary_image_path: str | None
    primary_image_tag: str | None


def _by_id(s: CoreSession, user_id: str) -> Row[Any] | None:
    return s.execute(select(_users).where(_users.c.id == user_id)).first()


def _by_name(s: CoreSession, name: str, other_than: str | None = None) -> Row[Any] | None:
    query = select(_users).where(func.lower(_users.c.name) == name.lower())
    if other_than is not None:
        query = query.where(_users.c.id != other_than)
    return s.execute(query).first()


def policy_of(user: UserRow | Row[Any]) -> w.UserPolicy:
    stored = msgspec.json.decode(user.policy_json or "{}", type=w.UserPolicy, strict=False)
    base = default_policy(bool(stored.IsAdministrator))
    changes = {f: getattr(stored, f) for f in stored.__struct_fields__ if getattr(stored, f) is not None}
    return msgspec.structs.replace(base, **changes)


def configuration_of(user: UserRow | Row[Any]) -> w.UserConfiguration:
    stored = msgspec.json.decode(user.configuration_json or "{}", type=w.UserConfiguration, strict=False)
    changes = {f: getattr(stored, f) for f in stored.__struct_fields__ if getattr(stored, f) is not None}
    return msgspec.structs.replace(default_user_configuration(), **changes)


@dataclass(frozen=True, slots=True)
class UserRecord:
    """A user as the rest of the server sees one (no password hash)."""

    id: str
    name: str
    has_password: bool
    policy: w.UserPolicy
    configuration: w.UserConfiguration
    last_login_date: datetime | None
    last_activity_date: datetime | None
    primary_image_tag: str | None

    @property
    def is_admin(self) -> bool:
        return bool(self.policy.IsAdministrator)

    @property
    def is_disabled(self) -> bool:
        return bool(self.policy.IsDisabled)


def _record(user: UserRow | Row[Any]) -> UserRecord:
    policy = msgspec.structs.replace(policy_of(user), InvalidLoginAttemptCount=user.invalid_login_attempts)
    return UserRecord(
        id=user.id, name=user.name, has_password=bool(user.password_hash), policy=policy,
        configuration=configuration_of(user), last_login_date=user.last_login_date,
        last_activity_date=user.last_activity_date, primary_image_tag=user.primary_image_tag)


def user_dto(user: UserRecord, server_id: str) -> w.UserDto:
    return w.UserDto(
        Name=user.name, ServerId=server_id, Id=user.id, PrimaryImageTag=user.primary_image_tag,
        HasPassword=user.has_password, HasConfiguredPassword=user.has_password, HasConfiguredEasyPassword=False,
        EnableAutoLogin=False, LastLoginDate=user.last_login_date, LastActivityDate=user.last_activity_date,
        Configuration=user.configuration, Policy=user.policy)


class AccountLockedError(UnauthorizedError):
    """A sign-in refused because the account is locked for a while after failed attempts."""

    def __init__(self, detail: str, user: UserRecord, seconds: int, newly: bool) -> None:
        super().__init__(detail)
        self.user = user
        self.seconds = seconds
        self.newly = newly  # this attempt caused the lock


def lockout_limit(policy: w.UserPolicy) -> int:
    """Failed attempts before a lock: the policy's LoginAttemptsBeforeLockout; -1 (the default)
    means Jellyfin's 3 for users and 5 for administrators; 0 means never."""
    limit = policy.LoginAttemptsBeforeLockout
    if limit is None or limit < 0:
        return 5 if policy.IsAdministrator else 3
    return limit


def _minutes(seconds: float) -> str:
    minutes = max(1, round(seconds / 60))
    return "1 minute" if minutes == 1 else f"{minutes} minutes"


class UserService:
    #: How long each successive lock lasts (seconds): 1, 5, then 15 minutes for every further one.
    LOCK_DURATIONS: tuple[float, ...] = (60, 300, 900)

    def __init__(self, db: Database) -> None:
        self.db = db
        self._cache: dict[str, UserRecord] = {}
        self._epoch = 0  # bumped by every invalidation
        self.lock_durations = self.LOCK_DURATIONS
        self._locked_until: dict[str, float] = {}  # user id -> time.time() when the lock ends

    # -- reads ---------------------------------------------------------------------------

    def _invalidate(self, user_id: str | None = None) -> None:
        self._epoch += 1  # a read that started before this must not store what it read
        if user_id is None:
            self._cache.clear()
        else:
            self._cache.pop(user_id, None)

    async def get(self, user_id: str) -> UserRecord:
        cached = self._cache.get(user_id)
        if cached is not None:
            return cached
        epoch = self._epoch
        row = await self.db.read(_by_id, user_id)
        if row is None:
            raise NotFoundError(f"User {user_id} not found.")
        record = _record(row)
        if epoch == self._epoch:  # else a write landed meanwhile: this row may predate it
            self._cache[user_id] = record
        return record

    def cached(self, user_id: str) -> UserRecord | None:
        """The record ``get`` would answer without reading (None when not loaded): a new object
        after every change of the user, their policy or configuration."""
        return self._cache.get(user_id)

    async def find(self, user_id: str) -> UserRecord | None:
        try:
            return await self.get(user_id)
        except NotFoundError:
            return None

    async def by_name(self, name: str) -> UserRecord | None:
        row = await self.db.read(_by_name, name)
        return _record(row) if row else None

    async def all(self) -> list[UserRecord]:
        query = select(_users).order_by(_users.c.name)
        return [_record(r) for r in await self.db.read(lambda s: s.execute(query).all())]

    async def count(self) -> int:
        query = select(func.count()).select_from(_users)
        return await self.db.read(lambda s: s.execute(query).scalar_one())

    # -- writes --------------------------------------------------------------------------

    async def create(self, name: str | None, password: str | None = None, *, is_admin: bool = False) -> UserRecord:
        name = validate_user_name(name)
        password_hash = await hash_password_async(password) if password else None

        def write(s: CoreSession) -> Row[Any]:
            if _by_name(s, name) is not None:
                raise BadRequestError(f"A user with the name '{name}' already exists.")
            user_id = new_guid()
            # (the other columns take the table's defaults: an empty configuration, no failed
            # attempts, date_created now)
            s.execute(insert(_users).values(id=user_id, name=name, password_hash=password_hash,
                                            policy_json=msgspec.json.encode(default_policy(is_admin)).decode()))
            row = _by_id(s, user_id)
            assert row is not None
            return row

        return _record(await self.db.write(write))

    async def _update(self, user_id: str, fn: Callable[[UserRow], None]) -> UserRecord:
        """Read the user's row, let ``fn`` change it, write the columns it changed (none: no statement)."""

        def write(s: CoreSession) -> UserRow:
            return _change(s, user_id, fn)

        row = await self.db.write(write)
        self._invalidate(user_id)
        return _record(row)

    async def rename(self, user_id: str, name: str | None) -> UserRecord:
        name = validate_user_name(name)

        def rename(user: UserRow) -> None:
            user.name = name

        def write(s: CoreSession) -> UserRow:
            if _by_name(s, name, other_than=user_id) is not None:
                raise BadRequestError(f"A user with the name '{name}' already exists.")
            return _change(s, user_id, rename)

        row = await self.db.write(write)
        self._invalidate(user_id)
        return _record(row)

    async def set_password(self, user_id: str, password: str | None) -> UserRecord:
        new_hash = await hash_password_async(password) if password else None

        def change(user: UserRow) -> None:
            user.password_hash = new_hash

        return await self._update(user_id, change)

    async def check_password(self, user_id: str, password: str) -> bool:
        row = await self.db.read(_by_id, user_id)
        if row is None:
            return False
        return await verify_password_async(row.password_hash, password)

    async def set_policy(self, user_id: str, policy: w.UserPolicy,
                         cleared: frozenset[str] = frozenset()) -> UserRecord:
        """Merge ``policy`` into the stored one: properties left out (None) keep their value,
        ``cleared`` ones (sent as null) go back to their default, for the nullable ones."""
        current = await self.get(user_id)
        changes = {f: getattr(policy, f) for f in policy.__struct_fields__ if getattr(policy, f) is not None}
        defaults = default_policy(bool(current.is_admin))
        for f in cleared & CLEARABLE_POLICY_FIELDS:
            changes[f] = getattr(defaults, f)
        merged = msgspec.structs.replace(current.policy, **changes)
        if not merged.IsAdministrator and current.is_admin:
            admins = [u for u in await self.all() if u.is_admin and u.id != user_id]
            if not admins:
                raise BadRequestError("There must be at least one administrator.")
        if merged.IsDisabled and current.is_admin and not current.is_disabled:
            enabled_admins = [u for u in await self.all() if u.is_admin and not u.is_disabled and u.id != user_id]
            if not enabled_admins:
                raise BadRequestError("The last enabled administrator cannot be disabled.")
        encoded = msgspec.json.encode(merged).decode()

        def change(user: UserRow) -> None:
            user.policy_json = encoded
            if not merged.IsDisabled:
                user.invalid_login_attempts = 0

        if not merged.IsDisabled:
            self._locked_until.pop(user_id, None)  # an administrator's save unlocks the account
        return await self._update(user_id, change)

    async def set_configuration(self, user_id: str, configuration: w.UserConfiguration) -> UserRecord:
        current = await self.get(user_id)
        changes = {f: getattr(configuration, f) for f in configuration.__struct_fields__
                   if getattr(configuration, f) is not None}
        encoded = msgspec.json.encode(msgspec.structs.replace(current.configuration, **changes)).decode()

        def change(user: UserRow) -> None:
            user.configuration_json = encoded

        return await self._update(user_id, change)

    async def set_image(self, user_id: str, path: str | None, tag: str | None) -> UserRecord:
        def change(user: UserRow) -> None:
            user.primary_image_path = path
            user.primary_image_tag = tag

        return await self._update(user_id, change)

    async def image_path(self, user_id: str) -> str | None:
        row = await self.db.read(_by_id, user_id)
        if row is None:
            raise NotFoundError(f"User {user_id} not found.")
        path: str | None = row.primary_image_path
        return path

    async def delete(self, user_id: str) -> UserRecord:
        target = await self.get(user_id)
        if target.is_admin:
            others = [u for u in await self.all() if u.is_admin and u.id != user_id]
            if not others:
                raise BadRequestError("The last administrator cannot be deleted.")

        def write(s: CoreSession) -> None:
            s.execute(delete(schema.devices).where(schema.devices.c.user_id == user_id))
            s.execute(delete(_users).where(_users.c.id == user_id))

        await self.db.write(write)
        self._invalidate(user_id)
        return target

    # -- sign-in -------------------------------------------------------------------------

    def locked_for(self, user_id: str) -> float:
        """Seconds left on the account's lock (0 when it is not locked)."""
        until = self._locked_until.get(user_id)
        if until is None:
            return 0.0
        left = until - time.time()
        if left <= 0:
            self._locked_until.pop(user_id, None)
            return 0.0
        return left

    async def verify_login(self, name: str, password: str, *, exempt_from_lockout: bool = False) -> UserRecord:
        """Check a name and password. Every outcome costs one argon2 verification (an unknown
        name is checked against a dummy hash), except a locked account, which is refused
        without one. Failures are counted (InvalidLoginAttemptCount); every
        LoginAttemptsBeforeLockout-th failure locks the account for a growing time (1, 5,
        then 15 minutes); it never disables it. ``exempt_from_lockout``: the desktop app's own
        sign-in, which no lock stops."""
        row = await self.db.read(_by_name, name or "")
        if row is None:
            await verify_password_async(None, password, known_user=False)
            raise UnauthorizedError("Invalid user or password entered.")
        record = _record(row)
        left = 0.0 if exempt_from_lockout else self.locked_for(row.id)
        if left > 0:
            raise AccountLockedError(
                f"Too many failed sign-in attempts: the account is locked for {_minutes(left)}.",
                record, int(left + 0.999), newly=False)
        ok = await verify_password_async(row.password_hash, password or "")
        if record.is_disabled:
            raise UnauthorizedError(f"The user {record.name} is disabled.")
        if ok:
            self._locked_until.pop(row.id, None)

            def success(user: UserRow) -> None:
                user.invalid_login_attempts = 0
                user.last_login_date = utcnow()
                user.last_activity_date = user.last_login_date

            return await self._update(row.id, success)

        limit = lockout_limit(record.policy)
        attempts = 0

        def failure(user: UserRow) -> None:
            nonlocal attempts
            user.invalid_login_attempts += 1
            attempts = user.invalid_login_attempts

        updated = await self._update(row.id, failure)
        if limit > 0 and attempts >= limit and attempts % limit == 0 and not exempt_from_lockout:
            durations = self.lock_durations
            seconds = durations[min(attempts // limit, len(durations)) - 1]
            self._locked_until[row.id] = time.time() + seconds
            log.warning("User %s locked out for %s s after %s failed sign-in attempts", record.name, seconds, attempts)
            raise AccountLockedError(
                f"Too many failed sign-in attempts: the account is locked for {_minutes(seconds)}.",
                updated, int(seconds), newly=True)
        raise UnauthorizedError("Invalid user or password entered.")

    async def touch(self, user_id: str) -> None:
        def change(user: UserRow) -> None:
            user.last_activity_date = utcnow()

        await self._update(user_id, change)


def _change(s: CoreSession, user_id: str, fn: Callable[[UserRow], None]) -> UserRow:
    """``UserService._update``'s write: the columns ``fn`` changed, in the table's order, as the ORM's
    flush wrote them (a column set to the value it had is left out)."""
    row = _by_id(s, user_id)
    if row is None:
        raise NotFoundError(f"User {user_id} not found.")
    user = UserRow(row._mapping)
    fn(user)
    changed = user.changes()
    if changed:
        s.execute(update(_users).where(_users.c.id == user_id).values(**changed))
    return user
