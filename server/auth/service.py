"""Access tokens (one per signed-in device) and API keys, with an in-memory lookup cache."""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from server.auth.header import ClientIdentity
from server.db.database import Database
from server.db.schema import utcnow
from server.errors import NotFoundError
from server.users.service import UserRecord, UserService

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from server.db.tables import ApiKey, Device, DeviceOptions


@dataclass(frozen=True, slots=True)
class TokenInfo:
    token: str
    user_id: str | None  # None for an API key
    device_id: str
    device_name: str
    client: str
    version: str
    is_api_key: bool


@dataclass(slots=True)
class AuthInfo:
    """The caller of an authenticated request."""

    token: str
    user: UserRecord | None
    is_api_key: bool
    device_id: str
    device_name: str
    client: str
    version: str
    extra: dict = field(default_factory=dict)

    @property
    def user_id(self) -> str | None:
        return self.user.id if self.user else None

    @property
    def is_admin(self) -> bool:
        return self.is_api_key or bool(self.user and self.user.is_admin)


def new_token() -> str:
    return secrets.token_hex(16)


class TokenService:
    def __init__(self, db: Database, users: UserService, system_id: str, server_name) -> None:
        self.db = db
        self.users = users
        self.system_id = system_id
        self.server_name = server_name  # callable -> str
        self._cache: dict[str, TokenInfo] = {}
        self._loaded = False

    async def _load(self) -> None:
        from sqlmodel import select

        from server.db.tables import ApiKey, Device

        def read(s: Session) -> list[TokenInfo]:
            out = [TokenInfo(d.access_token, d.user_id, d.device_id, d.device_name, d.app_name, d.app_version, False)
                   for d in s.scalars(select(Device))]
            out += [TokenInfo(k.access_token, None, self.system_id, "", k.name, "", True)
                    for k in s.scalars(select(ApiKey))]
            return out

        self._cache = {t.token: t for t in await self.db.read(read)}
        self._loaded = True

    async def lookup(self, token: str) -> TokenInfo | None:
        if not self._loaded:
            await self._load()
        found = self._cache.get(token)
        if found is None or not hmac.compare_digest(found.token.encode(), token.encode()):
            return None
        return found

    async def authenticate(self, identity: ClientIdentity) -> AuthInfo | None:
        if not identity.token:
            return None
        return await self.authenticate_token(identity.token)

    async def authenticate_token(self, token: str) -> AuthInfo | None:
        """The caller a token stands for (None for an unknown token or a deleted user): the
        token's device or API key from the in-memory map, its user from the user cache."""
        info = self._cache.get(token) if self._loaded else await self.lookup(token)  # (no await once loaded)
        if info is None:
            return None
        user = None
        if not info.is_api_key:
            user = await self.users.find(info.user_id or "")
            if user is None:
                return None
            return AuthInfo(info.token, user, False, info.device_id, info.device_name,
                            info.client, info.version)
        return AuthInfo(info.token, None, True, self.system_id, self.server_name(), info.client, "")

    # -- device tokens -------------------------------------------------------------------

    async def issue(self, user: UserRecord, identity: ClientIdentity) -> str:
        """A fresh token for (user, device); the device's earlier tokens are revoked."""
        from sqlmodel import select

        from server.db.tables import Device

        token = new_token()
        device_id = identity.device_id or "unknown"

        def write(s: Session) -> list[str]:
            old = list(s.scalars(select(Device).where(Device.device_id == device_id)))
            for dev in old:
                s.delete(dev)
            s.add(Device(access_token=token, user_id=user.id, device_id=device_id,
                         device_name=identity.device or "Unknown device", app_name=identity.client or "Unknown",
                         app_version=identity.version or ""))
            return [d.access_token for d in old]

        for revoked in await self.db.write(write):
            self._cache.pop(revoked, None)
        self._cache[token] = TokenInfo(token, user.id, device_id, identity.device or "Unknown device",
                                       identity.client or "Unknown", identity.version or "", False)
        return token

    async def revoke(self, token: str) -> None:
        from sqlmodel import select

        from server.db.tables import Device

        def write(s: Session) -> None:
            for dev in s.scalars(select(Device).where(Device.access_token == token)):
                s.delete(dev)

        await self.db.write(write)
        self._cache.pop(token, None)

    async def revoke_user(self, user_id: str, except_token: str | None = None) -> None:
        from sqlmodel import select

        from server.db.tables import Device

        def write(s: Session) -> list[str]:
            gone = []
            for dev in s.scalars(select(Device).where(Device.user_id == user_id)):
                if dev.access_token != except_token:
                    gone.append(dev.access_token)
                    s.delete(dev)
            return gone

        for t in await self.db.write(write):
            self._cache.pop(t, None)

    async def touch(self, token: str) -> None:
        from sqlmodel import select

        from server.db.tables import Device

        def write(s: Session) -> None:
            dev = s.scalars(select(Device).where(Device.access_token == token)).first()
            if dev is not None:
                dev.date_last_activity = utcnow()
                s.add(dev)

        await self.db.write(write)

    # -- devices -------------------------------------------------------------------------

    async def devices(self, user_id: str | None = None) -> list[Device]:
        from sqlmodel import col, select

        from server.db.tables import Device

        def read(s: Session) -> list[Device]:
            q = select(Device).order_by(col(Device.date_last_activity).desc())
            if user_id:
                q = q.where(Device.user_id == user_id)
            return list(s.scalars(q))

        return await self.db.read(read)

    async def device(self, device_id: str) -> Device:
        from sqlmodel import select

        from server.db.tables import Device

        row = await self.db.read(lambda s: s.scalars(select(Device).where(Device.device_id == device_id)).first())
        if row is None:
            raise NotFoundError(f"Device {device_id} not found.")
        return row

    async def delete_device(self, device_id: str) -> None:
        from sqlmodel import select

        from server.db.tables import Device

        await self.device(device_id)

        def write(s: Session) -> list[str]:
            gone = []
            for dev in s.scalars(select(Device).where(Device.device_id == device_id)):
                gone.append(dev.access_token)
                s.delete(dev)
            return gone

        for t in await self.db.write(write):
            self._cache.pop(t, None)

    async def device_options(self, device_id: str) -> DeviceOptions:
        from server.db.tables import DeviceOptions

        row = await self.db.read(lambda s: s.get(DeviceOptions, device_id))
        return row or DeviceOptions(device_id=device_id)

    async def set_device_name(self, device_id: str, custom_name: str | None) -> None:
        from server.db.tables import DeviceOptions

        await self.device(device_id)

        def write(s: Session) -> None:
            row = s.get(DeviceOptions, device_id) or DeviceOptions(device_id=device_id)
            row.custom_name = custom_name
            s.add(row)

        await self.db.write(write)

    # -- API keys ------------------------------------------------------------------------

    async def create_key(self, app_name: str) -> str:
        # (on the Core table: the desktop app makes its key at every first start, on the event
        # loop, where importing the ORM classes would hold every request for ~0.2 s)
        from sqlalchemy import insert

        from server.db.schema import api_keys

        token = new_token()
        await self.db.write(lambda s: s.execute(insert(api_keys).values(access_token=token, name=app_name)))
        self._cache[token] = TokenInfo(token, None, self.system_id, "", app_name, "", True)
        return token

    async def keys(self) -> list[ApiKey]:
        from sqlmodel import col, select

        from server.db.tables import ApiKey

        return await self.db.read(lambda s: list(s.scalars(select(ApiKey).order_by(col(ApiKey.date_created)))))

    async def revoke_key(self, token: str) -> None:
        from sqlmodel import select

        from server.db.tables import ApiKey

        def write(s: Session) -> None:
            for key in s.scalars(select(ApiKey).where(ApiKey.access_token == token)):
                s.delete(key)

        await self.db.write(write)
        self._cache.pop(token, None)

    async def key_named(self, name: str) -> str | None:
        """The token of the first key made with this name (the desktop app asks at every start)."""
        from sqlalchemy import select

        from server.db.schema import api_keys

        query = select(api_keys.c.access_token).where(api_keys.c.name == name).order_by(api_keys.c.id).limit(1)
        return await self.db.read(lambda s: s.execute(query).scalar())


def last_activity(dt: datetime | None) -> datetime:
    return dt or utcnow()
