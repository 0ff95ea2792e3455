"""The first-run wizard: initial configuration, the first administrator, remote access."""

from __future__ import annotations

import getpass
import hashlib
import re

import msgspec

from server.system.configuration import ConfigurationStore
from server.users.service import UserRecord, UserService
from server.wire import models as w


def _default_admin_name() -> str:
    try:
        name = getpass.getuser()
    except Exception:  # no login name in some service environments
        name = ""
    name = re.sub(r"[^\w \-'._@+]", "", name).strip()
    return name or "admin"


async def first_user(users: UserService) -> UserRecord:
    """The wizard's administrator, created on first use (as Jellyfin does on an empty server)."""
    everyone = await users.all()
    if everyone:
        admins = [u for u in everyone if u.is_admin]
        return (admins or everyone)[0]
    return await users.create(_default_admin_name(), is_admin=True)


def _password_digest(user_hash_present: bool, user_id: str, name: str) -> str | None:
    if not user_hash_present:
        return None
    # An opaque marker that a password is set; never the password or its stored hash.
    return hashlib.sha256(f"reelroom-password-set:{user_id}:{name}".encode()).hexdigest()


async def get_startup_user(users: UserService) -> w.StartupUserDto:
    user = await first_user(users)
    return w.StartupUserDto(Name=user.name, Password=_password_digest(user.has_password, user.id, user.name))


async def update_startup_user(users: UserService, body: w.StartupUserDto) -> None:
    user = await first_user(users)
    if body.Name is not None and body.Name != user.name:
        await users.rename(user.id, body.Name)
    if body.Password is not None:
        await users.set_password(user.id, body.Password)


def get_startup_configuration(config: ConfigurationStore) -> w.StartupConfigurationDto:
    cfg = config.server()
    return w.StartupConfigurationDto(UICulture=cfg.UICulture, MetadataCountryCode=cfg.MetadataCountryCode,
                                     PreferredMetadataLanguage=cfg.PreferredMetadataLanguage)


def update_startup_configuration(config: ConfigurationStore, body: w.StartupConfigurationDto) -> None:
    changes = {k: v for k, v in (("UICulture", body.UICulture), ("MetadataCountryCode", body.MetadataCountryCode),
                                 ("PreferredMetadataLanguage", body.PreferredMetadataLanguage)) if v is not None}
    config.update_server(**changes)


def set_remote_access(config: ConfigurationStore, body: w.StartupRemoteAccessDto) -> None:
    net = config.network()
    changes = {}
    if body.EnableRemoteAccess is not None:
        changes["EnableRemoteAccess"] = body.EnableRemoteAccess
    if body.EnableAutomaticPortMapping is not None:
        changes["EnableUPnP"] = body.EnableAutomaticPortMapping
    config.save("network", msgspec.structs.replace(net, **changes))


def complete(config: ConfigurationStore) -> None:
    config.update_server(IsStartupWizardCompleted=True)
