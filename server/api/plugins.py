"""Plugins, Package and Channels.

Plugins are Python packages (server/plugins/): listed with their status, enabled, disabled,
uninstalled and configured here; packages come from the configured repositories as wheels.
Reelroom does not run Jellyfin's .NET plugins and has no channels: those lists are empty.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response
from litestar.params import JSONBody

from server.api.base import operation
from server.api.params import Paging
from server.context import ServerContext
from server.errors import BadRequestError, NotFoundError
from server.plugins.manager import PluginRecord
from server.wire import models as w


def _empty_items(start_index: int | None = None) -> w.BaseItemDtoQueryResult:
    return w.BaseItemDtoQueryResult(Items=[], TotalRecordCount=0, StartIndex=start_index or 0)


def _info(record: PluginRecord) -> w.PluginInfo:
    plugin = record.plugin
    has_image = bool(plugin is not None and getattr(plugin, "image", None))
    config_name = (getattr(plugin, "config_section", None) or f"plugin-{record.id}") + ".json" if plugin else None
    return w.PluginInfo(Name=record.name, Version=record.version, ConfigurationFileName=config_name,
                        Description=record.description or "", Id=record.id, CanUninstall=record.can_uninstall,
                        HasImage=has_image, Status=record.status)


def _check_version(record: PluginRecord, version: str | None) -> None:
    if version and version != record.version:
        raise NotFoundError(f"{record.name} {version} is not installed (the installed version is {record.version}).")


@operation("GetPlugins")
async def get_plugins(ctx: ServerContext) -> list[w.PluginInfo]:
    return [_info(r) for r in ctx.plugins.list()]


def _uninstall(ctx: ServerContext, plugin_id: str) -> None:
    record = ctx.plugins.uninstall(plugin_id)
    ctx.events.publish("PackageUninstalled", msgspec.to_builtins(_info(record)), admins_only=True)


@operation("UninstallPlugin")
async def uninstall_plugin(ctx: ServerContext, pluginId: str) -> None:
    _uninstall(ctx, pluginId)


@operation("UninstallPluginByVersion")
async def uninstall_plugin_by_version(ctx: ServerContext, pluginId: str, version: str) -> None:
    _check_version(ctx.plugins.get(pluginId), version)
    _uninstall(ctx, pluginId)


@operation("DisablePlugin")
async def disable_plugin(ctx: ServerContext, pluginId: str, version: str) -> None:
    _check_version(ctx.plugins.get(pluginId), version)
    ctx.plugins.set_enabled(pluginId, False)


@operation("EnablePlugin")
async def enable_plugin(ctx: ServerContext, pluginId: str, version: str) -> None:
    _check_version(ctx.plugins.get(pluginId), version)
    ctx.plugins.set_enabled(pluginId, True)


@operation("GetPluginImage", media_type="image/*")
async def get_plugin_image(ctx: ServerContext, pluginId: str, version: str) -> Response[Any]:
    _check_version(ctx.plugins.get(pluginId), version)
    content, media = ctx.plugins.image(pluginId)
    return Response(content=content, media_type=media)


@operation("GetPluginConfiguration")
async def get_plugin_configuration(ctx: ServerContext, pluginId: str) -> Response[Any]:
    value = ctx.plugins.configuration(pluginId)
    return Response(content=msgspec.json.encode(value), media_type="application/json")


@operation("UpdatePluginConfiguration")
async def update_plugin_configuration(ctx: ServerContext, request: Request[Any, Any, Any], pluginId: str) -> None:
    ctx.plugins.get(pluginId)  # 404 before reading the body
    try:
        data = msgspec.json.decode(await request.body())
    except msgspec.DecodeError:
        raise BadRequestError("The plugin configuration must be a JSON object.") from None
    ctx.plugins.save_configuration(pluginId, data)


@operation("GetPluginManifest")
async def get_plugin_manifest(ctx: ServerContext, pluginId: str) -> None:
    ctx.plugins.get(pluginId)  # Reelroom keeps no separate manifest: 204 for a known plugin


@operation("GetPackages")
async def get_packages(ctx: ServerContext) -> list[w.PackageInfo]:
    return await ctx.packages.packages()


@operation("GetPackageInfo")
async def get_package_info(ctx: ServerContext, name: str, assemblyGuid: str | None = None) -> w.PackageInfo:
    return await ctx.packages.package(name, assemblyGuid)


@operation("InstallPackage")
async def install_package(ctx: ServerContext, name: str, assemblyGuid: str | None = None, version: str | None = None,
                          repositoryUrl: str | None = None) -> None:
    await ctx.packages.install(name, assemblyGuid, version, repositoryUrl)


@operation("CancelPackageInstallation")
async def cancel_package_installation(ctx: ServerContext, packageId: str) -> None:
    ctx.packages.cancel(packageId)


@operation("GetRepositories")
async def get_repositories(ctx: ServerContext) -> list[w.RepositoryInfo]:
    return ctx.config.server().PluginRepositories or []


@operation("SetRepositories")
async def set_repositories(ctx: ServerContext, data: JSONBody[list[w.RepositoryInfo]]) -> None:
    for repo in data:
        if not repo.Url:
            raise BadRequestError("Every repository needs a Url.")
    ctx.config.update_server(PluginRepositories=data)


@operation("GetChannels")
async def get_channels(page: Paging, userId: str | None = None, supportsLatestItems: bool | None = None,
                       supportsMediaDeletion: bool | None = None,
                       isFavorite: bool | None = None) -> w.BaseItemDtoQueryResult:
    return _empty_items(page.startIndex)


@operation("GetAllChannelFeatures")
async def get_all_channel_features() -> list[w.ChannelFeatures]:
    return []


@operation("GetChannelFeatures")
async def get_channel_features(channelId: str) -> w.ChannelFeatures:
    raise NotFoundError(f"No channel {channelId}.")


@operation("GetChannelItems")
async def get_channel_items(channelId: str) -> w.BaseItemDtoQueryResult:
    raise NotFoundError(f"No channel {channelId}.")


@operation("GetLatestChannelItems")
async def get_latest_channel_items(page: Paging) -> w.BaseItemDtoQueryResult:
    return _empty_items(page.startIndex)
