"""Plugins, Package and Channels.

Reelroom does not run Jellyfin's .NET plugins and has no channels, so these answer truthfully:
the lists are empty, an id names nothing (404), and installing a package is refused (400) with
the reason. Plugin repositories are still kept in the configuration, as clients edit them.
"""

from __future__ import annotations

from server.api.base import operation
from server.context import ServerContext
from server.errors import BadRequestError, NotFoundError
from server.wire import models as w

NO_PLUGINS = "Reelroom does not run Jellyfin plugins."


def _empty_items(start_index: int | None = None) -> w.BaseItemDtoQueryResult:
    return w.BaseItemDtoQueryResult(Items=[], TotalRecordCount=0, StartIndex=start_index or 0)


@operation("GetPlugins")
async def get_plugins() -> list[w.PluginInfo]:
    return []


def _no_such_plugin(pluginId: str) -> NotFoundError:
    return NotFoundError(f"No plugin {pluginId} is installed. {NO_PLUGINS}")


@operation("UninstallPlugin")
async def uninstall_plugin(pluginId: str) -> None:
    raise _no_such_plugin(pluginId)


@operation("UninstallPluginByVersion")
async def uninstall_plugin_by_version(pluginId: str, version: str) -> None:
    raise _no_such_plugin(pluginId)


@operation("DisablePlugin")
async def disable_plugin(pluginId: str, version: str) -> None:
    raise _no_such_plugin(pluginId)


@operation("EnablePlugin")
async def enable_plugin(pluginId: str, version: str) -> None:
    raise _no_such_plugin(pluginId)


@operation("GetPluginImage")
async def get_plugin_image(pluginId: str, version: str) -> None:
    raise _no_such_plugin(pluginId)


@operation("GetPluginConfiguration")
async def get_plugin_configuration(pluginId: str) -> w.BasePluginConfiguration:
    raise _no_such_plugin(pluginId)


@operation("UpdatePluginConfiguration")
async def update_plugin_configuration(pluginId: str) -> None:
    raise _no_such_plugin(pluginId)


@operation("GetPluginManifest")
async def get_plugin_manifest(pluginId: str) -> None:
    raise _no_such_plugin(pluginId)


@operation("GetPackages")
async def get_packages() -> list[w.PackageInfo]:
    return []


@operation("GetPackageInfo")
async def get_package_info(name: str, assemblyGuid: str | None = None) -> w.PackageInfo:
    raise NotFoundError(f"No package named {name!r}. {NO_PLUGINS}")


@operation("InstallPackage")
async def install_package(name: str, assemblyGuid: str | None = None, version: str | None = None,
                          repositoryUrl: str | None = None) -> None:
    raise BadRequestError(f"Cannot install {name!r}: {NO_PLUGINS}")


@operation("CancelPackageInstallation")
async def cancel_package_installation(packageId: str) -> None:
    raise NotFoundError(f"No installation {packageId} is in progress.")


@operation("GetRepositories")
async def get_repositories(ctx: ServerContext) -> list[w.RepositoryInfo]:
    return ctx.config.server().PluginRepositories or []


@operation("SetRepositories")
async def set_repositories(ctx: ServerContext, data: list[w.RepositoryInfo]) -> None:
    for repo in data:
        if not repo.Url:
            raise BadRequestError("Every repository needs a Url.")
    ctx.config.update_server(PluginRepositories=data)


@operation("GetChannels")
async def get_channels(userId: str | None = None, startIndex: int | None = None, limit: int | None = None,
                       supportsLatestItems: bool | None = None, supportsMediaDeletion: bool | None = None,
                       isFavorite: bool | None = None) -> w.BaseItemDtoQueryResult:
    return _empty_items(startIndex)


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
async def get_latest_channel_items(startIndex: int | None = None) -> w.BaseItemDtoQueryResult:
    return _empty_items(startIndex)
