"""Users: creation, naming rules, passwords, policies, sign-in with lockout."""

from __future__ import annotations

import logging
import re
import secrets
from dataclasses import dataclass
from datetime import datetime

import msgspec
from sqlmodel import Session, col, func, select

from server.db.database import Database
from server.db.tables import Device, User, utcnow
from server.errors import BadRequestError, NotFoundError, UnauthorizedError
from server.guid import new_guid
from server.users.passwords import hash_password, verify_password
from server.wire import models as w

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
    return UserRecord(
        id=user.id, name=user.name, has_password=bool(user.password_hash), policy=policy_of(user),
        configuration=configuration_of(user), last_login_date=user.last_login_date,
        last_activity_date=user.last_activity_date, primary_image_tag=user.primary_image_tag)


def user_dto(user: UserRecord, server_id: str) -> w.UserDto:
    return w.UserDto(
        Name=user.name, ServerId=server_id, Id=user.id, PrimaryImageTag=user.primary_image_tag,
        HasPassword=user.has_password, HasConfiguredPassword=user.has_password, HasConfiguredEasyPassword=False,
        EnableAutoLogin=False, LastLoginDate=user.last_login_date, LastActivityDate=user.last_activity_date,
        Configuration=user.configuration, Policy=user.policy)


class UserService:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._cache: dict[str, UserRecord] = {}

    # -- reads ---------------------------------------------------------------------------

    def _invalidate(self, user_id: str | None = None) -> None:
        if user_id is None:
            self._cache.clear()
        else:
            self._cache.pop(user_id, None)

    async def get(self, user_id: str) -> UserRecord:
        cached = self._cache.get(user_id)
        if cached is not None:
            return cached
        row = await self.db.read(lambda s: s.get(User, user_id))
        if row is None:
            raise NotFoundError(f"User {user_id} not found.")
        record = _record(row)
        self._cache[user_id] = record
        return record

    async def find(self, user_id: str) -> UserRecord | None:
        try:
            return await self.get(user_id)
        except NotFoundError:
            return None

    async def by_name(self, name: str) -> UserRecord | None:
        row = await self.db.read(
            lambda s: s.exec(select(User).where(func.lower(User.name) == name.lower())).first())
        return _record(row) if row else None

    async def all(self) -> list[UserRecord]:
        rows = await self.db.read(lambda s: list(s.exec(select(User).order_by(col(User.name)))))
        return [_record(r) for r in rows]

    async def count(self) -> int:
        return await self.db.read(lambda s: s.exec(select(func.count()).select_from(User)).one())

    # -- writes --------------------------------------------------------------------------

    async def create(self, name: str | None, password: str | None = None, *, is_admin: bool = False) -> UserRecord:
        name = validate_user_name(name)
        password_hash = hash_password(password) if password else None

        def write(s: Session) -> User:
            exists = s.exec(select(User).where(func.lower(User.name) == name.lower())).first()
            if exists is not None:
                raise BadRequestError(f"A user with the name '{name}' already exists.")
            user = User(id=new_guid(), name=name, password_hash=password_hash,
                        policy_json=msgspec.json.encode(default_policy(is_admin)).decode())
            s.add(user)
            return user

        return _record(await self.db.write(write))

    async def _update(self, user_id: str, fn) -> UserRecord:
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
        name = validate_user_name(name)

        def write(s: Session) -> User:
            clash = s.exec(select(User).where(func.lower(User.name) == name.lower(), User.id != user_id)).first()
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
        new_hash = hash_password(password) if password else None

        def change(user: User) -> None:
            user.password_hash = new_hash

        return await self._update(user_id, change)

    async def check_password(self, user_id: str, password: str) -> bool:
        row = await self.db.read(lambda s: s.get(User, user_id))
        return row is not None and verify_password(row.password_hash, password)

    async def set_policy(self, user_id: str, policy: w.UserPolicy) -> UserRecord:
        current = await self.get(user_id)
        changes = {f: getattr(policy, f) for f in policy.__struct_fields__ if getattr(policy, f) is not None}
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
        row = await self.db.read(lambda s: s.get(User, user_id))
        if row is None:
            raise NotFoundError(f"User {user_id} not found.")
        return row.primary_image_path

    async def delete(self, user_id: str) -> UserRecord:
        target = await self.get(user_id)
        if target.is_admin:
            others = [u for u in await self.all() if u.is_admin and u.id != user_id]
            if not others:
                raise BadRequestError("The last administrator cannot be deleted.")

        def write(s: Session) -> None:
            for dev in s.exec(select(Device).where(Device.user_id == user_id)):
                s.delete(dev)
            user = s.get(User, user_id)
            if user is not None:
                s.delete(user)

        await self.db.write(write)
        self._invalidate(user_id)
        return target

    # -- sign-in -------------------------------------------------------------------------

    async def verify_login(self, name: str, password: str) -> UserRecord:
        """Check a name and password; count failures and lock the account past the policy's
        limit (Jellyfin: 3 tries for users, 5 for administrators, when the policy says -1)."""
        row = await self.db.read(
            lambda s: s.exec(select(User).where(func.lower(User.name) == (name or "").lower())).first())
        if row is None:
            # Spend the same time as a real check, so names cannot be probed by timing.
            verify_password(hash_password(secrets.token_hex(8)), password or "x")
            raise UnauthorizedError("Invalid user or password entered.")
        record = _record(row)
        if record.is_disabled:
            raise UnauthorizedError(f"The user {record.name} is disabled.")
        if verify_password(row.password_hash, password or ""):
            def success(user: User) -> None:
                user.invalid_login_attempts = 0
                user.last_login_date = utcnow()
                user.last_activity_date = user.last_login_date

            return await self._update(row.id, success)

        limit = record.policy.LoginAttemptsBeforeLockout
        if limit is None or limit == -1:
            limit = 5 if record.is_admin else 3
        locked = False

        def failure(user: User) -> None:
            nonlocal locked
            user.invalid_login_attempts += 1
            if limit > 0 and user.invalid_login_attempts >= limit:
                policy = policy_of(user)
                user.policy_json = msgspec.json.encode(msgspec.structs.replace(policy, IsDisabled=True)).decode()
                locked = True

        await self._update(row.id, failure)
        if locked:
            log.warning("User %s locked out after %s failed sign-in attempts", record.name, limit)
        raise UnauthorizedError("Invalid user or password entered.")

    async def touch(self, user_id: str) -> None:
        def change(user: User) -> None:
            user.last_activity_date = utcnow()

        await self._update(user_id, change)
