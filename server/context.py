"""The composition root of one running server: its paths, configuration, database and services.

Every service is built here with exactly the dependencies its constructor names (other services,
the database, a small callable for a late-bound setting), and wired here: listeners, scheduled
tasks, close hooks. Handlers reach services through this object (injected as ``ctx``); no other
module under ``server/`` but ``app.py`` and ``runner.py`` imports it (tests/test_architecture.py).
Nothing here imports Qt.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from server import code_cache
from server.artwork.service import ArtworkService, ArtworkTask
from server.auth.service import AuthInfo, TokenService
from server.auth.signin import SignInService
from server.auth.throttle import SignInThrottle
from server.db import migrate
from server.db.database import Database, sqlite_url
from server.db.migration_child import MigrationChild, create_at_head
from server.events.hub import EventHub
from server.http.reply_cache import ReplyCache, reply_cache_budget
from server.http.wire_middleware import StartupState
from server.images.service import CleanImageCacheTask, ImageService
from server.library.browse.service import Browse
from server.library.catalog.fragment_store import FragmentStore, files_state, store_budget
from server.library.catalog.items import ItemService, Viewer, fragment_code_stamp
from server.library.catalog.page_fill import PageFill
from server.library.catalog.planner_stats import PlannerStats
from server.library.scan.hosts import CONFIG_KEY as LIBRARY_HOSTS_KEY
from server.library.scan.hosts import configured_hosts, wake_library_hosts
from server.library.scan.scanner import RefreshLibraryTask, Scanner
from server.library.scan.virtual_folders import LibraryService
from server.livetv.channel_playback import ChannelPlayback
from server.livetv.guide_task import RefreshGuideTask
from server.livetv.items import LiveTvItems
from server.livetv.live import LiveStreamManager
from server.livetv.recordings import RecordingService
from server.livetv.schedules_direct import SchedulesDirectClient
from server.livetv.settings import SECTIONS as LIVETV_SECTIONS
from server.livetv.tuners import LiveTvService
from server.memory import MemoryTrimmer, trim
from server.metadata.settings import SECTIONS as METADATA_SECTIONS
from server.metadata.settings import provider_settings
from server.net.lan import LanServices
from server.paths import ServerPaths
from server.periodic import SaveEvery
from server.playback import settings as playback_settings
from server.playback.hls_service import SETTINGS_SECTIONS, TranscodeService
from server.playback.service import PlaybackInfoService, PlaybackReports
from server.playback.streams import StreamService
from server.plugins.builtin import builtin_plugins
from server.plugins.manager import PluginManager
from server.readers.pool import ReaderPool, ReaderSettings
from server.resources import resources_dir
from server.sessions.manager import SessionManager
from server.subtitles.service import SubtitleService
from server.system.activity import ActivityLog
from server.system.branding import BrandingService
from server.system.configuration import ConfigurationStore
from server.system.filesystem import SECTIONS as FILESYSTEM_SECTIONS
from server.system.filesystem import FileSystemBrowser
from server.system.info import SystemInfoService
from server.tasks.builtin import CleanLogsTask, CleanTranscodeTask, OptimizeDatabaseTask
from server.tasks.scheduler import TaskScheduler
from server.trickplay.service import TrickplayService, TrickplayTask
from server.users.service import UserService
from server.web.host import WebClientHost
from server.web.settings import SECTIONS as WEB_SECTIONS

if TYPE_CHECKING:  # built on first use (ServerContext's lazy services): imported then
    from server.library.browse.boxsets import CollectionService
    from server.library.browse.editing import EditingService
    from server.library.browse.playlists import PlaylistService
    from server.library.browse.playstate import PlayStateService
    from server.library.browse.related import RelatedService
    from server.library.browse.tv import TvService
    from server.metadata.service import RemoteMetadataService
    from server.playback.versions import VersionService
    from server.plugins.packages import PackageService
    from server.subtitles.lyrics import LyricsService
    from server.subtitles.remote import RemoteTextService
    from server.syncplay.groups import SyncPlayManager
    from server.users.quick_connect import QuickConnect

log = logging.getLogger("reelroom.server")
#: seconds the mix fill's resume (after ready, in the executor) waits for the fragment store to open
RESUME_WAIT = 30.0


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
    readers: int | None = None  # most reader processes (0: none); None: REELROOM_READERS, else none
    readers_busy: int | None = None  # in-flight pages before readers take them; None: REELROOM_READERS_BUSY or 2
    # A due migration runs in a child process (server/db/migrate.py): Alembic never loads into the
    # server. The entry points set it; in-process (tests' servers) the migration runs on a thread.
    migrate_in_child: bool = False
    migration: MigrationChild | None = None  # one an entry point started before importing the server
    reply_cache_mib: float | None = None  # kept whole replies (0: off); None: REELROOM_REPLY_CACHE_MIB or 16
    fragment_store_mib: float | None = None  # item fragments on disk (0: off); None: REELROOM_FRAGMENT_STORE_MIB or 512


def read_or_create_system_id(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8").strip()
        return uuid.UUID(text).hex
    except (OSError, ValueError):
        system_id = uuid.uuid4().hex
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(system_id, encoding="utf-8")
        return system_id



@functools.lru_cache(maxsize=1024)
def _is_local_address(address: str) -> bool:
    """Loopback, private or link-local (asked on every request by the guard: kept per address)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local

class ServerContext:
    """Builds every service of one running server with the dependencies it names in its constructor,
    then wires them (listeners, scheduled tasks, close hooks) in ``_wire``. Nothing else in
    ``server/`` but the app, the runner and the handlers sees this object."""

    def __init__(self, options: ServerOptions, port: int | None = None) -> None:
        self.options = options
        self.port = port or options.port  # the bound port (differs when options.port is 0)
        self.init_task: asyncio.Task | None = None
        self.memory: MemoryTrimmer | None = None  # frees memory after bursts, once started
        self.paths = ServerPaths(options.data_dir)
        self.paths.ensure()
        self.started_at = time.time()
        self.system_id = read_or_create_system_id(self.paths.system_id_file)
        self.request_restart: Callable[[], None] = lambda: log.warning("Restart is not available here")
        self.request_shutdown: Callable[[], None] = lambda: log.warning("Shutdown is not available here")
        self._touches = SaveEvery(60.0)  # a token's last activity, written at most once a minute
        self._closers: list[Callable[[], object]] = []

        # -- the core: configuration, events, database, tasks
        self.config = ConfigurationStore(self.paths)
        # Each domain declares its configuration sections (key, defaults, validator) in its own module.
        self.config.register(*playback_settings.SECTIONS)  # encoding, transcoding
        self.config.register(*LIVETV_SECTIONS)  # livetv
        self.config.register(*METADATA_SECTIONS)  # metadata, xbmcmetadata and the providers' (tmdb, ...)
        self.config.register(*FILESYSTEM_SECTIONS)  # filesystem
        self.config.register(*WEB_SECTIONS)  # web
        self.startup = StartupState()
        self.closing = False  # set as close() begins (the Items lane then leaves requests to the app)
        self.events = EventHub()
        self.db = Database(options.database_url or sqlite_url(self.paths.database_file))
        self.db.trim_heap = trim  # (the fills' trims: server/library/catalog/idle.py)
        self.tasks = TaskScheduler(self.db, self.events)
        self.activity = ActivityLog(self.db, self.events, self.paths.log_dir,
                                    lambda: bool(self.config.server().AllowClientLogUpload))
        server_config = self.config.server  # the ServerConfiguration, read at each use

        # -- accounts, sessions, system
        self.users = UserService(self.db)
        self.tokens = TokenService(self.db, self.users, self.system_id, self.server_name)
        self.signin_throttle = SignInThrottle()  # per-address and per-user sign-in rate limits
        self.sessions = SessionManager(self.events, self.system_id)
        self.signin = SignInService(self.users, self.tokens, self.sessions, self.activity, self.signin_throttle,
                                    self.system_id)
        self.branding = BrandingService(self.config, self.paths.branding_dir,
                                        resources_dir() / "branding" / "splashscreen.png")
        self.filesystem = FileSystemBrowser(lambda: self.config.get("filesystem"))
        self.system_info = SystemInfoService(self.system_id, options.port, self.paths, self.config, self.server_name)
        self.lan = LanServices(self.system_id, self.port, self.server_name, self.config.network,
                               enabled=options.enable_lan, host=options.host, discovery_port=options.discovery_port,
                               zeroconf=options.enable_zeroconf)
        self.web = WebClientHost(self.paths.data_dir, self.paths.cache_dir, options.web_dir, options.host_web,
                                 lambda: self.config.get("web"))  # the web client at /web/

        # -- Live TV
        self.livetv = LiveTvService(self.config, self.filesystem)
        self.live_streams = LiveStreamManager(self.livetv, self.ffmpeg_path, self.paths.cache_dir / "livetv-hls")
        self.recordings = RecordingService(self.db, self.livetv, self.paths.data_dir, self.ffmpeg_path, self.events,
                                           self.live_streams)
        self.livetv_items = LiveTvItems(self.db, self.paths.metadata_dir)  # channels/recordings as items
        self.channel_playback = ChannelPlayback(self.livetv, self.live_streams)
        self.schedules_direct = SchedulesDirectClient(lambda: provider_settings(self.config.get("schedulesdirect"),
                                                                                "schedulesdirect"),
                                                      self.paths.cache_dir / "schedulesdirect")

        # -- the library: folders, the catalog (query engine, DTOs), browsing, images
        self.library = LibraryService(self.db, self.filesystem)
        store_bytes = store_budget(options.fragment_store_mib)
        self.items = ItemService(self.db, self.users, self.system_id, self.events,
                                 rating_country=lambda: server_config().MetadataCountryCode,
                                 store=FragmentStore(self.paths.cache_dir / "fragments.sqlite3", store_bytes,
                                                     fragment_code_stamp) if store_bytes else None,
                                 config_generation=lambda: self.replies.config_generation,
                                 store_state=self._store_state)
        if self.items.store is not None:
            self.items.store.trim_heap = trim  # (after its writer closed an idle connection)
        #: the store filled again in the background for the listings clients ask (page_fill.py)
        self.page_fill = PageFill(self.db, self.items, activity=lambda: self.db.activity + self.readers.stats.activity)
        #: whole replies of repeated list pages (GetItems, Resume, Latest, TV lists), server/http/reply_cache.py
        self.replies = ReplyCache(self.db, self.users, reply_cache_budget(options.reply_cache_mib))
        self.planner_stats = PlannerStats(self.db)  # SQLite ANALYZE after library changes
        # reader processes for heavy reads on the other cores, started only under load (server/readers/)
        self.readers = ReaderPool(self.db, self.system_id,
                                  ReaderSettings.resolve(options.readers, options.readers_busy),
                                  store_use=self.items.store_use, store=self.items.store)

        # -- plugins and the remote providers
        self.plugins = PluginManager(self.config, self.paths.data_dir,
                                     lambda: builtin_plugins(self.config, self.schedules_direct))
        self.plugins.load()  # a plugin that fails to load is Malfunctioned; the server starts anyway
        self._plugins_changed()
        # the plugin catalog (packages) and the remote metadata providers (metadata) are built on
        # first use: see the lazy services below

        # -- art: image routes, offline artwork (collages, frames), trickplay tiles
        def art_changed() -> None:  # late-bound: the artwork service is built after the images
            self.artwork.request()

        self.images = ImageService(self.db, self.events, self.users, self.paths, on_change=art_changed)
        self.artwork = ArtworkService(self.db, self.events, self.tasks, self.paths, self.ffmpeg_path,
                                      self.images.folder_images)
        self.trickplay = TrickplayService(self.db, self.paths, self.ffmpeg_path,
                                          lambda: server_config().TrickplayOptions)
        # TV, playlists, collections, similar, mixes, editing, play state: each built on first use
        self.browse = Browse(playstate=self._playstate, tv=self._tv, playlists=self._playlists,
                             collections=self._collections, related=self._related, editing=self._editing)
        self.scanner = Scanner(self.db, self.events, self.library, self.paths, self.tasks)

        # -- playback, subtitles, lyrics
        # progressive streams; ffmpeg as the transcoder found it (no ffmpeg: 503 ProblemDetails)
        self.streams = StreamService(self.items.row, self.db, lambda: self.transcodes.ffmpeg().path)
        # HLS requests and their ffmpeg jobs (settings follow the configuration: see _wire)
        self.transcodes = TranscodeService(self.config, self.paths, self.streams.source_row)
        self.playback = PlaybackInfoService(self.db, self.items, server_config, self.is_local_address,
                                            self.channel_playback.playback_info)
        self.playback_reports = PlaybackReports(self.items, self.sessions, self.events, self.transcodes,
                                                self.live_streams, server_config)  # -> user data, Sessions
        self.subtitles = SubtitleService(self.db, self.paths.cache_dir / "subtitles", self.ffmpeg_path,
                                         lambda: self.config.get("encoding"))

        self._wire()

    def _wire(self) -> None:
        """Listeners, scheduled tasks and close hooks: every link between services that is not a
        constructor argument is made here."""
        # listeners
        self.sessions.on_end(self._leave_syncplay)  # a session that ends leaves its group
        self.livetv.on_channels.append(self.livetv_items.sync)  # the Live TV view follows the tuners
        self.plugins.on_change(self._plugins_changed)
        self.config.add_listener(self.replies.config_saved)  # kept replies are made with the old settings
        self.config.add_listener(self.lan.config_saved)  # AutoDiscovery switches the LAN services live
        for key in SETTINGS_SECTIONS:  # encoding/transcoding saves reach the transcoder's running jobs
            self.config.on_change(key, self.transcodes.section_saved)
        self.scanner.add_listener(self.artwork.after_scan)  # a scan that changed something: new art
        if self.planner_stats.enabled:
            self.events.add_listener(self.planner_stats.on_event)

        # scheduled tasks, in the order /ScheduledTasks lists them (and start-up triggers fire)
        for task in (
            CleanImageCacheTask(self.images),
            TrickplayTask(self.trickplay),
            RefreshLibraryTask(self.scanner, self._wake_library_hosts),
            ArtworkTask(self.artwork),
            CleanLogsTask(self.paths.log_dir, self.activity, self.config.server),
            CleanTranscodeTask(self.paths.transcode_dir),
            OptimizeDatabaseTask(self.db),
            RefreshGuideTask(self.livetv, self.recordings),
        ):
            self.tasks.register(task)

        # close hooks, run in reverse order by close() after the services it stops itself
        self.on_close(self.images.cache.close)  # the rendering pool
        self.on_close(self.transcodes.close)  # every HLS job's ffmpeg
        self.on_close(self.scanner.aclose)  # a running pass, the watcher, the probe pool
        self.on_close(self.web.compression.close)  # the web client's compression pool
        self.on_close(self.readers.close)  # the reader processes
        if self.items.store is not None:
            store = self.items.store
            self.on_close(lambda: asyncio.to_thread(store.close))  # the fragment store's writer
        # (closers run last made first: the page fill stops before the fragment store closes)
        self.on_close(lambda: asyncio.to_thread(self.page_fill.close))

    # -- services built on first use -------------------------------------------------------
    # A plain start (no SyncPlay group, no Quick Connect request, no remote metadata or subtitle
    # search, no plugin catalog, no version merge, no lyrics) never builds these nor imports their
    # modules: each is made, with its module imported, the first time a handler asks ctx for it.
    # tests/system/test_lazy_services.py checks both halves.

    def _built(self, name: str) -> bool:
        return name in self.__dict__  # functools.cached_property keeps the built service there

    @functools.cached_property
    def syncplay(self) -> SyncPlayManager:
        from server.syncplay.groups import SyncPlayManager

        return SyncPlayManager(self.events)

    def _leave_syncplay(self, device_id: str) -> None:
        if self._built("syncplay"):  # no manager yet: the device is in no group
            self.syncplay.forget_device(device_id)

    @functools.cached_property
    def quick_connect(self) -> QuickConnect:
        from server.users.quick_connect import QuickConnect

        return QuickConnect(lambda: bool(self.config.server().QuickConnectAvailable))

    @functools.cached_property
    def packages(self) -> PackageService:  # the plugin catalog: repositories, installs
        from server.plugins.packages import PackageService

        return PackageService(self.config, self.plugins, self.events)

    @functools.cached_property
    def metadata(self) -> RemoteMetadataService:  # remote metadata and image providers
        from server.metadata.service import RemoteMetadataService

        return RemoteMetadataService(self.config, self.db, self.paths, self.events,
                                     providers=lambda: self.plugins.providers("metadata") + [
                                         p for p in self.plugins.providers("image")
                                         if "metadata" not in p.provider_kinds],
                                     library_options=self.library.options_of)

    @functools.cached_property
    def versions(self) -> VersionService:  # MergeVersions, DeleteAlternateSources
        from server.playback.versions import VersionService

        return VersionService(self.db, self.events)

    @functools.cached_property
    def lyrics(self) -> LyricsService:
        from server.subtitles.lyrics import LyricsService

        return LyricsService(self.db)

    @functools.cached_property
    def remote_text(self) -> RemoteTextService:  # remote subtitle and lyrics providers
        from server.subtitles.remote import RemoteTextService

        return RemoteTextService(self.plugins.providers, self.library.options_of, self.items,
                                 self.subtitles, self.lyrics, self.paths.data_dir)

    # the browsing parts (ctx.browse), made by Browse on first use with these dependencies
    def _playstate(self) -> PlayStateService:
        from server.library.browse.playstate import PlayStateService

        return PlayStateService(self.db, self.events, self.items)

    def _tv(self) -> TvService:
        from server.library.browse.tv import TvService

        return TvService(self.db, self.items)

    def _playlists(self) -> PlaylistService:
        from server.library.browse.playlists import PlaylistService

        return PlaylistService(self.db, self.users, self.system_id, on_change=lambda: self.artwork.request(),
                               fragments=self.items.fragments)

    def _collections(self) -> CollectionService:
        from server.library.browse.boxsets import CollectionService

        return CollectionService(self.db, on_change=lambda: self.artwork.request())

    def _related(self) -> RelatedService:
        from server.library.browse.related import RelatedService

        related = RelatedService(self.db, self.items)
        # (closers run last made first: the mix fill stops before the fragment store closes)
        self.on_close(lambda: asyncio.to_thread(related.close))
        return related

    def _editing(self) -> EditingService:
        from server.library.browse.editing import EditingService

        return EditingService(self.db, self.events, self.items, self.config,
                              lambda item_id: self.metadata.external_id_infos(item_id))

    # -- facts ---------------------------------------------------------------------------

    def server_name(self) -> str:
        return self.config.server().ServerName or "Reelroom"

    @property
    def wizard_completed(self) -> bool:
        return bool(self.config.server().IsStartupWizardCompleted)

    def is_local_address(self, address: str) -> bool:
        return _is_local_address(address)

    def ffmpeg_path(self) -> str:
        from server.media.ffmpeg import find_ffmpeg

        return find_ffmpeg(self.config.get("encoding").EncoderAppPath or None).path

    def _plugins_changed(self) -> None:
        self.livetv.listing_sources = {p.type: p for p in self.plugins.providers("listings")}

    async def _wake_library_hosts(self) -> list[bool]:
        """Wake-on-LAN for the NAS boxes of the ``libraryhosts`` configuration, before a scan."""
        return await wake_library_hosts(configured_hosts(self.config.get(LIBRARY_HOSTS_KEY)))

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
            await asyncio.to_thread(self._migrate)
            await self.items.start()
            await asyncio.to_thread(self.transcodes.clean_start)  # ffmpeg a killed server left behind
            await self.tasks.load()
            await self.scanner.start()
            await self.activity.add(f"{self.server_name()} started", "ServerStarted")
            await self.lan.start()
            await self.livetv.channels()  # the Live TV view and channel items follow the tuners
        except Exception as exc:
            log.exception("Server start-up failed")
            self.startup.failed = f"Reelroom could not start: {exc}"
            return
        self.startup.ready = True
        log.info("Reelroom is ready on port %s", self.port)
        # Start-up tasks (and the scheduler) begin once requests are served, not in their way; so
        # does the recorder's first look at its timers (the start's statements use no ORM class, so
        # SQLAlchemy's mapper configuration comes after the first 200 too)
        self.recordings.start()
        self.tasks.start_background()
        from server.users.passwords import warm_up_soon

        argon2_loaded = warm_up_soon()  # the dummy hash unknown names are checked against, made once we serve
        # InstantMix's shapes the last run kept filled: the fill goes on (its thread, nice 19, idle
        # time); the mixes' service is imported and made off the loop
        asyncio.get_running_loop().run_in_executor(None, self._resume_mix_fill)
        # the GetItems listings the last run's clients asked: their pages filled again (the same
        # thread priority and idle time), so the first browse after an upgrade or a crash is warm
        asyncio.get_running_loop().run_in_executor(None, self._resume_page_fill, asyncio.get_running_loop())
        # dataclass methods this start compiled, kept for the next one; the texts let go (server/code_cache.py).
        # After argon2-cffi's import on the password pool (the dummy hash's first step): its classes are
        # the start's too, kept every time (settled before them, a start now and then compiled them again)
        loop = asyncio.get_running_loop()

        def settle(_loaded: object) -> None:
            with contextlib.suppress(RuntimeError):  # (the loop closed meanwhile: a server stopped at once)
                loop.call_soon_threadsafe(loop.run_in_executor, None, code_cache.settle)

        argon2_loaded.add_done_callback(settle)
        # start-up's garbage, then each burst's, goes back to the system; SQLite's page caches too,
        # once the database has been left alone for a look (10 s)
        self.memory = MemoryTrimmer(quiet=(lambda: self.db.activity, self.db.release_memory))
        self.memory.start()

    def _record_ready(self, record: Path | None) -> bool:
        """(Off the loop.) Whether a fill's record of the last run is there to resume, with the
        fragment store open: it opens on a thread of its own beside the start, so it is waited for
        up to ``RESUME_WAIT`` seconds (a close ends the wait at once), not skipped."""
        store = self.items.store
        if record is None or store is None or self.closing or not record.exists():
            return False
        return store.wait_open(RESUME_WAIT, lambda: self.closing) and not self.closing

    def _resume_mix_fill(self) -> None:
        """(In the executor: nobody awaits it, so a failure is logged here; mixes go on without it.)"""
        try:
            from server.library.browse.mix_fill import record_path

            if self._record_ready(record_path(self.items.store)):
                self.browse.related.mix_fill.resume()
        except Exception:
            if not self.closing:
                log.exception("The InstantMix fill could not resume the last run's shapes")

    def _resume_page_fill(self, loop: asyncio.AbstractEventLoop) -> None:
        """(In the executor, as ``_resume_mix_fill``.) Each family's viewer is its user as they are
        now (read on the loop)."""
        try:
            from server.library.catalog.page_fill import record_path

            if not self._record_ready(record_path(self.items.store)):
                return

            def viewer_of(user_id: str) -> Viewer | None:
                user = asyncio.run_coroutine_threadsafe(self.users.find(user_id), loop).result(RESUME_WAIT)
                return None if user is None else Viewer(user, self.items.rating_country())

            self.page_fill.resume(viewer_of)
        except Exception:
            if not self.closing:
                log.exception("The page fill could not resume the last run's listings")

    def _migrate(self) -> None:
        """Bring the database to the newest schema (a worker thread); a no-op check when it is."""
        if self.options.migration is not None:
            log.info("Waiting for the database migration the entry point started")
            self.options.migration.wait()  # raises MigrationFailed
        elif self.options.database_url is None and create_at_head(self.paths.database_file):
            log.info("Created the database at the newest schema")  # a new SQLite file: no migration
        if migrate.up_to_date(self.db.engine):  # (once: upgrade() would ask again)
            log.info("Database schema is up to date")
            return
        if self.options.migrate_in_child:
            log.info("Migrating the database in a child process")
            MigrationChild(self.db.url).wait()
        migrate.upgrade(self.db.engine, self.db.url)  # finds it up to date after a child

    async def close(self) -> None:
        self.closing = True
        if self.init_task is not None and not self.init_task.done():
            self.init_task.cancel()
        await asyncio.to_thread(self.lan.stop)
        if self.memory is not None:
            await self.memory.stop()
        await self.tasks.stop()
        await self.recordings.stop()
        await self.live_streams.close_all()
        await self.livetv_items.close()
        if self._built("metadata"):  # its image client, if it made one
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
        store = self.items.store
        if store is not None and store.enabled:  # a clean close: the next start may take over its epoch
            stamp = (self.db.content_generation, self.replies.config_generation)
            state = await asyncio.to_thread(self._store_state)
            if state:
                await asyncio.to_thread(store.record_clean, state, stamp)

    def _store_state(self) -> str | None:
        """What the fragment store's fragments are made from, as files (fragment_store.files_state):
        the SQLite database with its WAL and journal, and the configuration files. None on
        PostgreSQL (a restart starts a new series of epochs there)."""
        database = self.db.file
        if database is None or str(database).startswith("file:"):
            return None
        config = sorted(p for p in self.paths.config_dir.rglob("*") if p.is_file())[:512]
        return files_state([database, database.with_name(database.name + "-wal"),
                            database.with_name(database.name + "-journal"), *config])

    # -- per request ---------------------------------------------------------------------

    async def note_activity(self, auth: AuthInfo, remote: str) -> None:
        """Keep the session list and the device's last activity fresh (the DB at most once a
        minute per token)."""
        self.sessions.touch(auth, remote)
        if not auth.is_api_key and self._touches.due(auth.token, time.monotonic()):
            await self.tokens.touch(auth.token)
