"""Users: creation, naming rules, passwords, policies, sign-in with lockout."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import msgspec
from sqlalchemy import func

from server.db.database import Database
from server.db.schema import utcnow
from server.errors import BadRequestError, NotFoundError, UnauthorizedError
from server.guid import new_guid
from server.users.passwords import hash_password_async, verify_password_async
from server.wire import models as w

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from server.db.tables import User

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


def policy_of(user: User) -> w.UserPolicy:
    stored = msgspec.json.decode(user.policy_json or "{}", type=w.UserPolicy, strict=False)
    base = default_policy(bool(stored.IsAdministrator))
    changes = {f: getattr(stored, f) for f in stored.__struct_fields__ if getattr(stored, f) is not None}
    return msgspec.structs.replace(base, **changes)


def configuration_of(user: User) -> w.UserConfiguration:
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


def _record(user: User) -> UserRecord:
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
        from server.db.tables import User

        epoch = self._epoch
        row = await self.db.read(lambda s: s.get(User, user_id))
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
        from sqlmodel import select

        from server.db.tables import User

        row = await self.db.read(
            lambda s: s.scalars(select(User).where(func.lower(User.name) == name.lower())).first())
        return _record(row) if row else None

    async def all(self) -> list[UserRecord]:
        def read(s: Session) -> list[User]:
            # (imported here, on the reader thread: GET /Users/Public, anonymous, may be the first use)
            from sqlmodel import col, select

            from server.db.tables import User

            return list(s.scalars(select(User).order_by(col(User.name))))

        return [_record(r) for r in await self.db.read(read)]

    async def count(self) -> int:
        from sqlmodel import select

        from server.db.tables import User

        return await self.db.read(lambda s: s.scalars(select(func.count()).select_from(User)).one())

    # -- writes --------------------------------------------------------------------------

    async def create(self, name: str | None, password: str | None = None, *, is_admin: bool = False) -> UserRecord:
        from sqlmodel import select

        from server.db.tables import User

        name = validate_user_name(name)
        password_hash = await hash_password_async(password) if password else None

        def write(s: Session) -> User:
            exists = s.scalars(select(User).where(func.lower(User.name) == name.lower())).first()
            if exists is not None:
                raise BadRequestError(f"A user with the name '{name}' already exists.")
            user = User(id=new_guid(), name=name, password_hash=password_hash,
                        policy_json=msgspec.json.encode(default_policy(is_admin)).decode())
            s.add(user)
            return user

        return _record(await self.db.write(write))

    async def _update(self, user_id: str, fn) -> UserRecord:
        from server.db.tables import User

        def write(s: Session) -> User:
            user = s.get(User, user_id)
            if user is None:
                raise NotFoundError(f"User {user_id} not found.")
            fn(user)
            s.add(user)
            return user

        row = await self.db.write(write)
        self._invalidate(user_id)
        return _record(row)

    async def rename(self, user_id: str, name: str | None) -> UserRecord:
        from sqlmodel import select

        from server.db.tables import User

        name = validate_user_name(name)

        def write(s: Session) -> User:
            clash = s.scalars(select(User).where(func.lower(User.name) == name.lower(), User.id != user_id)).first()
            if clash is not None:
                raise BadRequestError(f"A user with the name '{name}' already exists.")
            user = s.get(User, user_id)
            if user is None:
                raise NotFoundError(f"User {user_id} not found.")
            user.name = name
            s.add(user)
            return user

        row = await self.db.write(write)
        self._invalidate(user_id)
        return _record(row)

    async def set_password(self, user_id: str, password: str | None) -> UserRecord:
        new_hash = await hash_password_async(password) if password else None

        def change(user: User) -> None:
            user.password_hash = new_hash

        return await self._update(user_id, change)

    async def check_password(self, user_id: str, password: str) -> bool:
        from server.db.tables import User

        row = await self.db.read(lambda s: s.get(User, user_id))
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

        def change(user: User) -> None:
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

        def change(user: User) -> None:
            user.configuration_json = encoded

        return await self._update(user_id, change)

    async def set_image(self, user_id: str, path: str | None, tag: str | None) -> UserRecord:
        def change(user: User) -> None:
            user.primary_image_path = path
            user.primary_image_tag = tag

        return await self._update(user_id, change)

    async def image_path(self, user_id: str) -> str | None:
        def read(s: Session) -> User | None:
            from server.db.tables import User  # (on the reader thread: GetUserImage is anonymous)

            return s.get(User, user_id)

        row = await self.db.read(read)
        if row is None:
            raise NotFoundError(f"User {user_id} not found.")
        return row.primary_image_path

    async def delete(self, user_id: str) -> UserRecord:
        from sqlmodel import select

        from server.db.tables import Device, User

        target = await self.get(user_id)
        if target.is_admin:
            others = [u for u in await self.all() if u.is_admin and u.id != user_id]
            if not others:
                raise BadRequestError("The last administrator cannot be deleted.")

        def write(s: Session) -> None:
            for dev in s.scalars(select(Device).where(Device.user_id == user_id)):
                s.delete(dev)
            user = s.get(User, user_id)
            if user is not None:
                s.delete(user)

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
        from sqlmodel import select

        from server.db.tables import User

        row = await self.db.read(
            lambda s: s.scalars(select(User).where(func.lower(User.name) == (name or "").lower())).first())
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

            def success(user: User) -> None:
                user.invalid_login_attempts = 0
                user.last_login_date = utcnow()
                user.last_activity_date = user.last_login_date

            return await self._update(row.id, success)

        limit = lockout_limit(record.policy)
        attempts = 0

        def failure(user: User) -> None:
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
        def change(user: User) -> None:
            user.last_activity_date = utcnow()

        await self._update(user_id, change)
