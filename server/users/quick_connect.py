"""Quick Connect: a signed-in user authorizes a new device by typing the code it shows."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

from server.errors import NotFoundError, UnauthorizedError
from server.wire import models as w

CODE_LIFETIME_SECONDS = 10 * 60


@dataclass
class _Request:
    secret: str
    code: str
    device_id: str
    device_name: str
    app_name: str
    app_version: str
    created: float
    user_id: str | None = None


class QuickConnect:
    def __init__(self, is_enabled) -> None:
        self._is_enabled = is_enabled  # callable -> bool
        self._by_secret: dict[str, _Request] = {}

    @property
    def enabled(self) -> bool:
        return bool(self._is_enabled())

    def _require_enabled(self) -> None:
        if not self.enabled:
            raise UnauthorizedError("Quick Connect is not enabled on this server.")

    def _expire(self) -> None:
        cutoff = time.monotonic() - CODE_LIFETIME_SECONDS
        for secret in [s for s, r in self._by_secret.items() if r.created < cutoff]:
            del self._by_secret[secret]

    def _result(self, r: _Request) -> w.QuickConnectResult:
        from datetime import UTC, datetime

        return w.QuickConnectResult(Authenticated=r.user_id is not None, Secret=r.secret, Code=r.code,
                                    DeviceId=r.device_id, DeviceName=r.device_name, AppName=r.app_name,
                                    AppVersion=r.app_version, DateAdded=datetime.fromtimestamp(
                                        time.time() - (time.monotonic() - r.created), UTC))

    def initiate(self, device_id: str, device_name: str, app_name: str, app_version: str) -> w.QuickConnectResult:
        self._require_enabled()
        self._expire()
        codes = {r.code for r in self._by_secret.values()}
        code = f"{secrets.randbelow(10**6):06d}"
        while code in codes:
            code = f"{secrets.randbelow(10**6):06d}"
        req = _Request(secrets.token_hex(32), code, device_id, device_name, app_name, app_version, time.monotonic())
        self._by_secret[req.secret] = req
        return self._result(req)

    def state(self, secret: str) -> w.QuickConnectResult:
        self._require_enabled()
        self._expire()
        req = self._by_secret.get(secret)
        if req is None:
            raise NotFoundError("Unknown Quick Connect secret.")
        return self._result(req)

    def authorize(self, code: str, user_id: str) -> bool:
        self._require_enabled()
        self._expire()
        for req in self._by_secret.values():
            if req.code == code and req.user_id is None:
                req.user_id = user_id
                return True
        raise NotFoundError("Unknown Quick Connect code.")

    def redeem(self, secret: str) -> str:
        self._require_enabled()
        req = self._by_secret.get(secret)
        if req is None or req.user_id is None:
            raise UnauthorizedError("Quick Connect request is unknown or not authorized.")
        del self._by_secret[secret]
        return req.user_id
