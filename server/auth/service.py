"""Access tokens (one per signed-in device) and API keys, with an in-memory lookup cache.

On the Core tables of ``server/db/schema.py`` (``devices``, ``device_options``, ``api_keys``): every
signed-in request comes through here, and no ORM class is loaded for it. Devices and keys are
handed out as rows (``Row``: the columns as attributes)."""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, insert, select, update

from server.auth.header import ClientIdentity
from server.db.database import Database
from server.db.schema import api_keys, device_options, devices, utcnow
from server.errors import NotFoundError
from server.users.service import UserRecord, UserService

if TYPE_CHECKING:
    from sqlalchemy.engine import Row

    from server.db.database import CoreSession


@dataclass(frozen=True, slots=True)
class DeviceOptions:
    """A device's options (``device_options``'s row, or the defaults of a device without one)."""

    device_id: str
    custom_name: str | None = None


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
        def read(s: CoreSession) -> list[TokenInfo]:
            d = devices.c
            out = [TokenInfo(r.access_token, r.user_id, r.device_id, r.device_name, r.app_name, r.app_version, False)
                   for r in s.execute(select(d.access_token, d.user_id, d.device_id, d.device_name, d.app_name,
                                             d.app_version))]
            out += [TokenInfo(r.access_token, None, self.system_id, "", r.name, "", True)
                    for r in s.execute(select(api_keys.c.access_token, api_keys.c.name))]
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
        token = new_token()
        device_id = identity.device_id or "unknown"

        def write(s: CoreSession) -> list[str]:
            old = s.execute(select(devices.c.id, devices.c.access_token).where(devices.c.device_id == device_id)).all()
            # the new row first, then the old ones gone (the order the ORM's flush had: on SQLite the
            # new row's id is past the old ones', never one of theirs again)
            s.execute(insert(devices).values(access_token=token, user_id=user.id, device_id=device_id,
                                             device_name=identity.device or "Unknown device",
                                             app_name=identity.client or "Unknown", app_version=identity.version or ""))
            if old:
                s.execute(delete(devices).where(devices.c.id.in_([row.id for row in old])))
            return [row.access_token for row in old]

        for revoked in await self.db.write(write):
            self._cache.pop(revoked, None)
        self._cache[token] = TokenInfo(token, user.id, device_id, identity.device or "Unknown device",
                                       identity.client or "Unknown", identity.version or "", False)
        return token

    async def revoke(self, token: str) -> None:
        await self.db.write(lambda s: s.execute(delete(devices).where(devices.c.access_token == token)))
        self._cache.pop(token, None)

    async def revoke_user(self, user_id: str, except_token: str | None = None) -> None:
        def write(s: CoreSession) -> list[str]:
            query = select(devices.c.access_token).where(devices.c.user_id == user_id)
            gone = [t for t in s.execute(query).scalars() if t != except_token]
            if gone:
                s.execute(delete(devices).where(devices.c.access_token.in_(gone)))
            return gone

        for t in await self.db.write(write):
            self._cache.pop(t, None)

    async def touch(self, token: str) -> None:
        statement = update(devices).where(devices.c.access_token == token).values(date_last_activity=utcnow())
        await self.db.write(lambda s: s.execute(statement))

    # -- devices -------------------------------------------------------------------------

    async def devices(self, user_id: str | None = None) -> list[Row[Any]]:
        query = select(devices).order_by(devices.c.date_last_activity.desc())
        if user_id:
            query = query.where(devices.c.user_id == user_id)
        return await self.db.read(lambda s: list(s.execute(query).all()))

    async def device(self, device_id: str) -> Row[Any]:
        query = select(devices).where(devices.c.device_id == device_id)

        def read(s: CoreSession) -> Row[Any] | None:
            return s.execute(query).first()

        row = await self.db.read(read)
        if row is None:
            raise NotFoundError(f"Device {device_id} not found.")
        return row

    async def delete_device(self, device_id: str) -> None:
        await self.device(device_id)

        def write(s: CoreSession) -> list[str]:
            gone = list(s.execute(select(devices.c.access_token).where(devices.c.device_id == device_id)).scalars())
            s.execute(delete(devices).where(devices.c.device_id == device_id))
            return gone

        for t in await self.db.write(write):
            self._cache.pop(t, None)

    async def device_options(self, device_id: str) -> DeviceOptions:
        query = select(device_options.c.custom_name).where(device_options.c.device_id == device_id)
        row = await self.db.read(lambda s: s.execute(query).first())
        return DeviceOptions(device_id, row.custom_name if row is not None else None)

    async def set_device_name(self, device_id: str, custom_name: str | None) -> None:
        await self.device(device_id)
        o = device_options.c

        def write(s: CoreSession) -> None:
            row = s.execute(select(o.custom_name).where(o.device_id == device_id)).first()
            if row is None:
                s.execute(insert(device_options).values(device_id=device_id, custom_name=custom_name))
            elif row.custom_name != custom_name:  # (an unchanged name writes nothing, as before)
                s.execute(update(device_options).where(o.device_id == device_id).values(custom_name=custom_name))

        await self.db.write(write)

    # -- API keys ------------------------------------------------------------------------

    async def create_key(self, app_name: str) -> str:
        # (the desktop app makes its key at every first start, on the event loop)
        token = new_token()
        await self.db.write(lambda s: s.execute(insert(api_keys).values(access_token=token, name=app_name)))
        self._cache[token] = TokenInfo(token, None, self.system_id, "", app_name, "", True)
        return token

    async def keys(self) -> list[Row[Any]]:
        query = select(api_keys).order_by(api_keys.c.date_created)
        return await self.db.read(lambda s: list(s.execute(query).all()))

    async def revoke_key(self, token: str) -> None:
        await self.db.write(lambda s: s.execute(delete(api_keys).where(api_keys.c.access_token == token)))
        self._cache.pop(token, None)

    async def key_named(self, name: str) -> str | None:
        """The token of the first key made with this name (the desktop app asks at every start)."""
        query = select(api_keys.c.access_token).where(api_keys.c.name == name).order_by(api_keys.c.id).limit(1)
        return await self.db.read(lambda s: s.execute(query).scalar())


def last_activity(dt: datetime | None) -> datetime:
    return dt or utcnow()
