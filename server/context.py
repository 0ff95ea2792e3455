"""The composition of one running server: its paths, configuration, database and services.

Handlers reach services through this object (injected as ``ctx``). Services never import
handlers, and nothing here imports Qt.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from server.artwork.service import ArtworkService
from server.auth.service import AuthInfo, TokenService
from server.auth.throttle import SignInThrottle
from server.db import migrate
from server.db.database import Database, sqlite_url
from server.events.hub import EventHub
from server.http.wire_middleware import StartupState
from server.images.service import ImageService
from server.library.browse.service import Browse
from server.library.catalog.items import ItemService
from server.library.scan.scanner import Scanner
from server.library.scan.virtual_folders import LibraryService
from server.livetv.items import LiveTvItems
from server.livetv.live import LiveStreamManager
from server.livetv.recordings import RecordingService
from server.livetv.schedules_direct import SchedulesDirectClient
from server.livetv.settings import SECTIONS as LIVETV_SECTIONS
from server.livetv.tuners import LiveTvService
from server.memory import MemoryTrimmer
from server.metadata.service import RemoteMetadataService
from server.metadata.settings import SECTIONS as METADATA_SECTIONS
from server.metadata.settings import provider_settings
from server.net.lan import LanServices
from server.paths import ServerPaths
from server.playback import settings as playback_settings
from server.playback.hls_service import TranscodeService
from server.playback.service import PlaybackReports
from server.playback.streams import StreamService
from server.plugins.builtin import builtin_plugins
from server.plugins.manager import PluginManager
from server.plugins.packages import PackageService
from server.resources import resources_dir
from server.sessions.manager import SessionManager
from server.subtitles.lyrics import LyricsService
from server.subtitles.remote import RemoteTextService
from server.subtitles.service import SubtitleService
from server.syncplay.groups import SyncPlayManager
from server.system.activity import ActivityLog
from server.system.branding import BrandingService
from server.system.configuration import ConfigurationStore
from server.system.filesystem import SECTIONS as FILESYSTEM_SECTIONS
from server.system.filesystem import FileSystemBrowser
from server.tasks.scheduler import TaskScheduler
from server.trickplay.service import TrickplayService
from server.users.quick_connect import QuickConnect
from server.users.service import UserService
from server.web.settings import SECTIONS as WEB_SECTIONS

log = logging.getLogger("reelroom.server")


@dataclass
class ServerOptions:
    data_dir: Path
    port: int = 8096
    host: str = "0.0.0.0"
    database_url: str | None = None
    enable_lan: bool = True
    enable_zeroconf: bool = True
    discovery_port: int = 7359
    web_dir: Path | None = None  # --web-dir / REELROOM_WEB_DIR: the web client folder to host at /web/
    host_web: bool = True  # False with --no-web / REELROOM_NO_WEB


def read_or_create_system_id(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8").strip()
        return uuid.UUID(text).hex
    except (OSError, ValueError):
        system_id = uuid.uuid4().hex
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(system_id, encoding="utf-8")
        return system_id


class ServerContext:
    def __init__(self, options: ServerOptions, port: int | None = None) -> None:
        self.options = options
        self.port = port or options.port  # the bound port (differs when options.port is 0)
        self.init_task: asyncio.Task | None = None
        self.memory: MemoryTrimmer | None = None  # frees memory after bursts, once started
        self.paths = ServerPaths(options.data_dir)
        self.paths.ensure()
        self.started_at = time.time()
        self.system_id = read_or_create_system_id(self.paths.system_id_file)
        self.config = ConfigurationStore(self.paths)
        # Each domain declares its configuration sections (key, defaults, validator) in its own module.
        self.config.register(*playback_settings.SECTIONS)  # encoding, transcoding
        self.config.register(*LIVETV_SECTIONS)  # livetv
        self.config.register(*METADATA_SECTIONS)  # metadata, xbmcmetadata and the providers' (tmdb, ...)
        self.config.register(*FILESYSTEM_SECTIONS)  # filesystem
        self.config.register(*WEB_SECTIONS)  # web
        self.startup = StartupState()
        self.events = EventHub()
        self.db = Database(options.database_url or sqlite_url(self.paths.database_file))
        self.users = UserService(self.db)
        self.tokens = TokenService(self.db, self.users, self.system_id, self.server_name)
        self.signin_throttle = SignInThrottle()  # per-address and per-user sign-in rate limits
        self.sessions = SessionManager(self.events, self.system_id)
        self.syncplay = SyncPlayManager(self.events)
        self.sessions.on_end(self.syncplay.forget_device)
        self.activity = ActivityLog(self.db, self.events, self.paths.log_dir,
                                    lambda: bool(self.config.server().AllowClientLogUpload))
        self.branding = BrandingService(self.config, self.paths.branding_dir,
                                        resources_dir() / "branding" / "splashscreen.png")
        self.tasks = TaskScheduler(self.db, self.events)
        self.quick_connect = QuickConnect(lambda: bool(self.config.server().QuickConnectAvailable))
        self.filesystem = FileSystemBrowser(lambda: self.config.get("filesystem"))
        self.lan = LanServices(self)
        self.livetv = LiveTvService(self.config, self.filesystem)
        self.recordings = RecordingService(self.db, self.livetv, self.paths.data_dir, self.ffmpeg_path, self.events)
        self.livetv_items = LiveTvItems(self.db, self.paths.metadata_dir)  # channels/recordings as items
        self.livetv.on_channels.append(self.livetv_items.sync)
        self.live_streams = LiveStreamManager(self.livetv, self.ffmpeg_path, self.paths.cache_dir / "livetv-hls")
        self.recordings.live_streams = self.live_streams
        self.schedules_direct = SchedulesDirectClient(lambda: provider_settings(self.config.get("schedulesdirect"),
                                                                                "schedulesdirect"),
                                                      self.paths.cache_dir / "schedulesdirect")
        self.plugins = PluginManager(self.config, self.paths.data_dir,
                                     lambda: builtin_plugins(self.config, self.schedules_direct))
        self.plugins.load()  # a plugin that fails to load is Malfunctioned; the server starts anyway
        self.plugins.on_change(self._plugins_changed)
        self._plugins_changed()
        self.packages = PackageService(self.config, self.plugins, self.events)
        self.metadata = RemoteMetadataService(self.config, self.db, self.paths, self.events,
                                              providers=lambda: self.plugins.providers("metadata") + [
                                                  p for p in self.plugins.providers("image")
                                                  if "metadata" not in p.provider_kinds],
                                              library_options=self._library_options)
        self.request_restart: Callable[[], None] = lambda: log.warning("Restart is not available here")
        self.request_shutdown: Callable[[], None] = lambda: log.warning("Shutdown is not available here")
        self._last_touch: dict[str, float] = {}
        self._extensions: list[Callable[[ServerContext], object]] = []
        self._closers: list[Callable[[], object]] = []
        self.library = LibraryService(self.db, self.filesystem)
        self.images = ImageService(self)  # registers the image-cache cleanup task, closes its pool
        self.items = ItemService(self.db, self.users, self.system_id, self.events)  # the query engine and item DTOs
        self.items.rating_country = lambda: self.config.server().MetadataCountryCode
        self.browse = Browse(self)  # TV, playlists, collections, similar, mixes, editing, play state
        self.playback_reports = PlaybackReports(self)  # playback reports -> user data and the Sessions view
        # progressive streams; ffmpeg as the transcoder found it (no ffmpeg: 503 ProblemDetails)
        self.streams = StreamService(self.items.row, self.db, lambda: self.transcodes.ffmpeg().path)
        # HLS requests and their ffmpeg jobs (settings applied by a configuration listener)
        self.transcodes = TranscodeService(self.config, self.paths, self.streams.source_row)
        self.on_close(self.transcodes.close)  # kills every transcode
        self.subtitles = SubtitleService(self.db, self.paths.cache_dir / "subtitles", self.ffmpeg_path,
                                         lambda: self.config.get("encoding"))
        self.lyrics = LyricsService(self.db)
        self.remote_text = RemoteTextService(self.plugins.providers, self._library_options, self.items,
                                             self.subtitles, self.lyrics, self.paths.data_dir)
        self.trickplay = TrickplayService(self)  # registers the RefreshTrickplayImages task
        self.web = None  # the web client host (server.web.host.WebClientHost), set by create_app
        self.scanner = Scanner(self)  # registers the RefreshLibrary task and closes its pool and watcher
        self.artwork = ArtworkService(self)  # registers RefreshArtwork; runs after scans that changed something

    # -- facts ---------------------------------------------------------------------------

    def server_name(self) -> str:
        return self.config.server().ServerName or "Reelroom"

    @property
    def wizard_completed(self) -> bool:
        return bool(self.config.server().IsStartupWizardCompleted)

    def is_local_address(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return ip.is_loopback or ip.is_private or ip.is_link_local

    def ffmpeg_path(self) -> str:
        from server.media.ffmpeg import find_ffmpeg

        return find_ffmpeg(self.config.get("encoding").EncoderAppPath or None).path

    def _plugins_changed(self) -> None:
        self.livetv.listing_sources = {p.type: p for p in self.plugins.providers("listings")}

    async def _library_options(self, library_id: str | None):
        if not library_id:
            return None
        for info in await self.library.libraries():
            if info.id == library_id:
                return info.options
        return None

    # -- lifecycle -----------------------------------------------------------------------

    def on_close(self, fn: Callable[[], object]) -> None:
        self._closers.append(fn)

    async def initialize(self) -> None:
        """Migrate the database and start background work; until this finishes every request
        gets a 503."""
        self.events.bind_loop(asyncio.get_running_loop())
        self.artwork.bind_loop(asyncio.get_running_loop())
        try:
            self.startup.message = "Reelroom is updating its database."
            await asyncio.to_thread(migrate.upgrade, self.db.engine, self.db.url)
            await self.items.start()
            await asyncio.to_thread(self.transcodes.clean_start)  # ffmpeg a killed server left behind
            from server.tasks.builtin import register_builtin_tasks

            register_builtin_tasks(self)
            await self.tasks.load()
            await self.scanner.start()
            await self.activity.add(f"{self.server_name()} started", "ServerStarted")
            await self.lan.start()
            self.recordings.start()
            await self.livetv.channels()  # the Live TV view and channel items follow the tuners
        except Exception as exc:
            log.exception("Server start-up failed")
            self.startup.failed = f"Reelroom could not start: {exc}"
            return
        self.startup.ready = True
        log.info("Reelroom is ready on port %s", self.port)
        # Start-up tasks (and the scheduler) begin once requests are served, not in their way.
        self.tasks.start_background()
        from server.users.passwords import warm_up_soon

        warm_up_soon()  # the dummy hash unknown names are checked against, made once we serve
        self.memory = MemoryTrimmer()  # start-up's garbage, then each burst's, goes back to the system
        self.memory.start()

    async def close(self) -> None:
        if self.init_task is not None and not self.init_task.done():
            self.init_task.cancel()
        await asyncio.to_thread(self.lan.stop)
        if self.memory is not None:
            await self.memory.stop()
        await self.tasks.stop()
        await self.recordings.stop()
        await self.live_streams.close_all()
        await self.livetv_items.close()
        await self.metadata.close()
        await self.plugins.close()
        await self.schedules_direct.aclose()
        for fn in reversed(self._closers):
            try:
                result = fn()
                if asyncio.iscoroutine(result):
                    await result
            except Exception:
                log.exception("Error while shutting down")
        await asyncio.to_thread(self.db.close)

    # -- per request ---------------------------------------------------------------------

    async def note_activity(self, auth: AuthInfo, remote: str) -> None:
        """Keep the session list and the device's last activity fresh (the DB at most once a
        minute per token)."""
        self.sessions.touch(auth, remote)
        now = time.monotonic()
        if not auth.is_api_key and now - self._last_touch.get(auth.token, 0) > 60:
            self._last_touch[auth.token] = now
            await self.tokens.touch(auth.token)
