"""Python plugins end to end: a plugin wheel built here, served by a local repository,
installed through /Packages/Installed/{name}, active after a restart, configured, disabled,
uninstalled; broken and unsafe packages; the built-in providers as plugins."""

from __future__ import annotations

import io
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from tests.conftest import LiveServer, complete_wizard, start_server, stop_server
from tests.metadata.conftest import add_item
from tests.metadata.fakes import closed_port
from tests.providers.wheels import FakeRepository, make_wheel

PLUGIN_SOURCE = '''
import msgspec
from server.plugins.base import ConfigPage, Plugin
from server.wire import models as w


class Settings(msgspec.Struct):
    Greeting: str = "hello"
    Volume: int = 5


class EchoLyrics:
    name = "Echo Lyrics"
    provider_kinds = frozenset({"lyrics"})
    provider_prefix = "echo"

    def __init__(self, settings):
        self.settings = settings

    def is_enabled(self):
        return True

    async def search(self, query):
        text = f"{self.settings()['Greeting']} {query.title}"
        lyrics = w.LyricDto(Metadata=w.LyricMetadata(IsSynced=False), Lyrics=[w.LyricLine(Text=text)])
        return [w.RemoteLyricInfoDto(Id="echo_1", ProviderName=self.name, Lyrics=lyrics)]


class EchoPlugin(Plugin):
    id = "{plugin_id}"
    name = "Echo"
    version = "1.0.0"
    description = "Says hello in the lyrics."
    config_model = Settings
    config_pages = (ConfigPage(name="EchoConfig", resource="web/config.html", display_name="Echo settings"),
                    ConfigPage(name="EchoConfigJS", resource="web/config.js"))
    image = "web/echo.png"

    def providers(self, host):
        return [EchoLyrics(host.settings)]
'''

CONFIG_HTML = "<div data-role='page' class='echoConfigPage'><h1>Echo</h1></div>"


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(buf, "PNG")
    return buf.getvalue()


def echo_wheel(module: str, plugin_id: str) -> bytes:
    return make_wheel(f"{module}", "1.0.0", {
        f"{module}/__init__.py": PLUGIN_SOURCE.replace("{plugin_id}", plugin_id),
        f"{module}/web/config.html": CONFIG_HTML,
        f"{module}/web/config.js": "export default function (view) { view.querySelector('h1'); }",
        f"{module}/web/echo.png": _png(),
    }, f"[reelroom.plugins]\necho = {module}:EchoPlugin\n")


@pytest.fixture
def repository() -> Iterator[FakeRepository]:
    repo = FakeRepository().start()
    yield repo
    repo.stop()


@pytest.fixture
def live(tmp_path: Path) -> Iterator[dict]:
    holder = {"server": start_server(tmp_path / "data")}
    complete_wizard(holder["server"])
    yield holder
    stop_server(holder["server"])


def restart(holder: dict) -> LiveServer:
    old = holder["server"]
    stop_server(old)
    new = start_server(old.data_dir)
    new.admin_token, new.admin_id = old.admin_token, old.admin_id  # the token lives in the database
    holder["server"] = new
    return new


def _plugin(c, name: str) -> dict | None:
    return next((p for p in c.get("/Plugins").json() if p["Name"] == name), None)


def test_install_configure_disable_uninstall(live, repository):
    server = live["server"]
    module = f"echo_plugin_{uuid.uuid4().hex[:8]}"
    plugin_id = uuid.uuid4().hex
    package = repository.add("Echo", plugin_id, "1.0.0", echo_wheel(module, plugin_id))
    repository.packages.append({"guid": uuid.uuid4().hex, "name": "DotNet Only", "versions": [
        {"version": "1.0.0.0", "sourceUrl": repository.url + "/x.zip", "checksum": "0" * 32}]})
    with server.admin() as c:
        assert c.post("/Repositories", json=[{"Name": "Test repo", "Url": repository.url + "/manifest.json",
                                              "Enabled": True}]).status_code == 204
        packages = c.get("/Packages").json()
        assert [p["name"] for p in packages] == ["Echo"]  # the .NET-only package is not offered
        assert packages[0]["versions"][0]["checksum"] == package["versions"][0]["checksum"]
        assert packages[0]["versions"][0]["repositoryName"] == "Test repo"
        assert c.get("/Packages/Echo").json()["guid"] == plugin_id
        assert c.get("/Packages/Nothing").status_code == 404

        r = c.post("/Packages/Installed/Echo")
        assert r.status_code == 204, r.text
        echo = _plugin(c, "Echo")
        assert echo["Status"] == "Restart" and echo["Id"] == plugin_id and echo["Version"] == "1.0.0"
    folder = server.data_dir / "plugins" / "packages" / f"{module}-1.0.0"
    assert (folder / module / "__init__.py").is_file()

    server = restart(live)
    with server.admin() as c:
        echo = _plugin(c, "Echo")
        assert echo["Status"] == "Active" and echo["CanUninstall"] is True and echo["HasImage"] is True
        image = c.get(f"/Plugins/{plugin_id}/1.0.0/Image")
        assert image.status_code == 200 and image.content == _png() and image.headers["content-type"] == "image/png"

        # configuration: defaults, saved, read back, validated against the model
        assert c.get(f"/Plugins/{plugin_id}/Configuration").json() == {"Greeting": "hello", "Volume": 5}
        assert c.post(f"/Plugins/{plugin_id}/Configuration", json={"Greeting": "hi there", "volume": 7}
                      ).status_code == 204
        assert c.get(f"/Plugins/{plugin_id}/Configuration").json() == {"Greeting": "hi there", "Volume": 7}
        bad = c.post(f"/Plugins/{plugin_id}/Configuration", json={"Volume": "loud"})
        assert bad.status_code == 400 and "Volume" in bad.json()["detail"]
        assert c.post(f"/Plugins/{plugin_id}/Configuration", content=b"[1,").status_code == 400
        assert c.get(f"/Plugins/{plugin_id}/Configuration").json()["Volume"] == 7

        # the dashboard's plugin pages
        pages = c.get("/web/ConfigurationPages").json()
        assert {"Name": "EchoConfig", "EnableInMainMenu": False, "DisplayName": "Echo settings",
                "PluginId": plugin_id} in pages
        page = c.get("/web/ConfigurationPage", params={"name": "EchoConfig"})
        assert page.status_code == 200 and page.text == CONFIG_HTML and page.headers["content-type"].startswith(
            "text/html")
        script = c.get("/web/ConfigurationPage", params={"name": "echoconfigjs"})
        assert script.status_code == 200 and "javascript" in script.headers["content-type"]
        assert c.get("/web/ConfigurationPage", params={"name": "nope"}).status_code == 404

        # its provider works: lyrics search answers through it, with the saved greeting (LrcLib, the
        # built-in lyrics provider, is pointed where nothing listens: no test reaches the internet)
        assert c.post("/System/Configuration/lrclib", json={"BaseUrl": f"http://127.0.0.1:{closed_port()}"}
                      ).status_code == 204
        track = add_item(server, "/music/echo/song.mp3", kind="Audio", media_type="Audio", name="Song",
                         artists_json='["Someone"]')
        found = c.get(f"/Audio/{track}/RemoteSearch/Lyrics").json()
        assert [x["Lyrics"]["Lyrics"][0]["Text"] for x in found if x["ProviderName"] == "Echo Lyrics"] == [
            "hi there Song"]

        # disabled: listed as Disabled, its provider gone; enabled again
        assert c.post(f"/Plugins/{plugin_id}/1.0.0/Disable").status_code == 204
        assert _plugin(c, "Echo")["Status"] == "Disabled"
        assert not [x for x in c.get(f"/Audio/{track}/RemoteSearch/Lyrics").json() if x["ProviderName"] == "Echo Lyrics"]
        assert c.post(f"/Plugins/{plugin_id}/2.0.0/Enable").status_code == 404  # not that version
        assert c.post(f"/Plugins/{plugin_id}/1.0.0/Disable").status_code == 204
    server = restart(live)  # the flag survives a restart
    with server.admin() as c:
        assert _plugin(c, "Echo")["Status"] == "Disabled"
        assert c.post(f"/Plugins/{plugin_id}/1.0.0/Enable").status_code == 204
        assert _plugin(c, "Echo")["Status"] == "Active"

        # a non-admin may not manage plugins
        assert c.post("/Users/New", json={"Name": "viewer", "Password": "pw"}).status_code == 200
    with server.client(device="viewer-device") as anon:
        token = anon.post("/Users/AuthenticateByName", json={"Username": "viewer", "Pw": "pw"}).json()["AccessToken"]
    with server.client(token, "viewer-device") as viewer:
        assert viewer.delete(f"/Plugins/{plugin_id}").status_code == 403
        assert viewer.post("/Packages/Installed/Echo").status_code == 403

    with server.admin() as c:
        assert c.delete(f"/Plugins/{plugin_id}").status_code == 204
        assert _plugin(c, "Echo")["Status"] == "Deleted"
    server = restart(live)
    with server.admin() as c:
        assert _plugin(c, "Echo") is None
    assert not folder.exists()


def test_bad_packages_are_refused(live, repository):
    server = live["server"]
    good = echo_wheel(f"echo_bad_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex)
    repository.add("Wrong Sum", uuid.uuid4().hex, "1.0.0", good, checksum="ab" * 32)
    repository.add("Escapes", uuid.uuid4().hex, "1.0.0", make_wheel(
        "escapes", "1.0.0", {"escapes/__init__.py": ""}, "[reelroom.plugins]\nx = escapes:X\n",
        extra_members={"../../evil.py": b"print('owned')"}))
    repository.add("Compiled", uuid.uuid4().hex, "1.0.0", make_wheel(
        "compiled", "1.0.0", {"compiled/__init__.py": "", "compiled/fast.so": b"\x7fELF"},
        "[reelroom.plugins]\nx = compiled:X\n"))
    repository.add("Not Pure", uuid.uuid4().hex, "1.0.0", make_wheel(
        "notpure", "1.0.0", {"notpure/__init__.py": ""}, "[reelroom.plugins]\nx = notpure:X\n", pure=False))
    repository.add("No Entry Point", uuid.uuid4().hex, "1.0.0", make_wheel(
        "noentry", "1.0.0", {"noentry/__init__.py": ""}, None))
    with server.admin() as c:
        c.post("/Repositories", json=[{"Name": "r", "Url": repository.url + "/manifest.json", "Enabled": True}])
        expected = {"Wrong Sum": "does not match its checksum", "Escapes": "unsafe file name",
                    "Compiled": "compiled code", "Not Pure": "pure-Python", "No Entry Point": "not a Reelroom plugin"}
        for name, reason in expected.items():
            r = c.post(f"/Packages/Installed/{name}")
            assert r.status_code == 400 and reason in r.json()["detail"], (name, r.text)
        assert c.post("/Packages/Installed/Absent").status_code == 404
        names = {p["Name"] for p in c.get("/Plugins").json()}
        assert not names & set(expected)
    packages = server.data_dir / "plugins" / "packages"
    assert [p.name for p in packages.iterdir()] == []
    assert not (server.data_dir / "evil.py").exists() and not (server.data_dir / "plugins" / "evil.py").exists()


def test_cancel_an_installation(live, repository):
    server = live["server"]
    plugin_id = uuid.uuid4().hex
    repository.add("Slow", plugin_id, "1.0.0", echo_wheel(f"echo_slow_{uuid.uuid4().hex[:8]}", plugin_id))
    with server.admin() as c:
        c.post("/Repositories", json=[{"Name": "r", "Url": repository.url + "/manifest.json", "Enabled": True}])
        repository.delay = 1.5  # every request (the manifest, then the wheel) takes a while
        result = {}
        worker = threading.Thread(target=lambda: result.update(r=server.admin().post("/Packages/Installed/Slow")))
        worker.start()
        deadline = threading.Event()
        for _ in range(100):
            if any(r.path.startswith("/wheels/") for r in repository.requests):
                break
            deadline.wait(0.05)
        assert c.delete(f"/Packages/Installing/{plugin_id}").status_code == 204
        worker.join(30)
        assert result["r"].status_code == 409 and "cancelled" in result["r"].json()["detail"]
        assert _plugin(c, "Echo") is None
        assert c.delete(f"/Packages/Installing/{plugin_id}").status_code == 204  # nothing to cancel: still 204
    assert [p.name for p in (server.data_dir / "plugins" / "packages").iterdir()] == []


def test_a_broken_plugin_is_malfunctioned_and_the_server_starts(live, repository):
    server = live["server"]
    module = f"broken_plugin_{uuid.uuid4().hex[:8]}"
    plugin_id = uuid.uuid4().hex
    repository.add("Broken", plugin_id, "0.1.0", make_wheel(module, "0.1.0", {
        f"{module}/__init__.py": "raise RuntimeError('this plugin is broken on purpose')\n"},
        f"[reelroom.plugins]\nbroken = {module}:Plugin\n"))
    with server.admin() as c:
        c.post("/Repositories", json=[{"Name": "r", "Url": repository.url + "/manifest.json", "Enabled": True}])
        assert c.post("/Packages/Installed/Broken").status_code == 204
    server = restart(live)
    with server.admin() as c:
        assert c.get("/System/Info").status_code == 200
        broken = _plugin(c, "Broken")
        assert broken["Status"] == "Malfunctioned" and broken["Id"] == plugin_id
        assert "broken on purpose" in broken["Description"]
        assert c.post(f"/Plugins/{plugin_id}/0.1.0/Enable").status_code == 400
        assert c.get(f"/Plugins/{plugin_id}/Configuration").status_code == 404
        assert c.delete(f"/Plugins/{plugin_id}").status_code == 204  # but it can be removed
    server = restart(live)
    with server.admin() as c:
        assert _plugin(c, "Broken") is None


def test_builtin_providers_are_plugins(live):
    server = live["server"]
    with server.admin() as c:
        plugins = {p["Name"]: p for p in c.get("/Plugins").json()}
        assert {"TheMovieDb", "MusicBrainz", "TVmaze", "Fanart.tv", "Open Subtitles", "LrcLib",
                "Schedules Direct"} <= set(plugins)
        tmdb = plugins["TheMovieDb"]
        assert tmdb["Status"] == "Active" and tmdb["CanUninstall"] is False
        r = c.delete(f"/Plugins/{tmdb['Id']}")
        assert r.status_code == 400 and "cannot be uninstalled" in r.json()["detail"]
        # its configuration is the named section the wizard and tray use
        assert c.post(f"/Plugins/{tmdb['Id']}/Configuration", json={"ApiKey": "k-123"}).status_code == 204
        assert c.get("/System/Configuration/tmdb").json()["ApiKey"] == "k-123"
        assert c.post(f"/Plugins/{tmdb['Id']}/Configuration", json={"BaseUrl": "ftp://x"}).status_code == 400
        # disabling TVmaze takes it out of the image providers
        series = add_item(server, "/tv/bi/Show", kind="Series", is_folder=True, name="Show")
        names = [p["Name"] for p in c.get(f"/Items/{series}/RemoteImages/Providers").json()]
        assert "TVmaze" in names
        version = plugins["TVmaze"]["Version"]
        assert c.post(f"/Plugins/{plugins['TVmaze']['Id']}/{version}/Disable").status_code == 204
        names = [p["Name"] for p in c.get(f"/Items/{series}/RemoteImages/Providers").json()]
        assert "TVmaze" not in names
        assert c.get(f"/Plugins/{'0' * 31}1").status_code in (404, 405)
        assert c.get(f"/Plugins/{'0' * 31}1/Configuration").status_code == 404
        # each built-in has a settings page for the dashboard, editing its configuration
        subs = plugins["Open Subtitles"]
        pages = {p["Name"]: p for p in c.get("/web/ConfigurationPages").json()}
        assert pages["opensubtitlesconfig"]["PluginId"] == subs["Id"]
        assert pages["opensubtitlesconfig"]["DisplayName"] == "Open Subtitles"
        page = c.get("/web/ConfigurationPage", params={"name": "opensubtitlesconfig"}).text
        assert 'data-key="ApiKey"' in page and 'type="password" data-key="Password"' in page
        assert f'var pluginId = "{subs["Id"]}"' in page and "updatePluginConfiguration" in page
        assert "tvmazeconfig" not in pages  # disabled above: its page is gone with it
        # the library options offer the providers as fetchers
        options = c.get("/Libraries/AvailableOptions", params={"libraryContentType": "tvshows"}).json()
        series_opts = next(t for t in options["TypeOptions"] if t["Type"] == "Series")
        assert {"TheMovieDb"} <= {f["Name"] for f in series_opts["MetadataFetchers"]}
        assert "Open Subtitles" in {f["Name"] for f in options["SubtitleFetchers"]}
        assert "LrcLib" in {f["Name"] for f in options["LyricFetchers"]}



def test_the_readme_plugin_example_works(tmp_path):
    import asyncio

    from server.errors import BadRequestError
    from server.plugins.base import PluginHost
    from server.subtitles.lrclib import LyricsQuery

    readme = Path(__file__).resolve().parents[2] / "README.md"
    code = readme.read_text(encoding="utf-8").split("**Writing a plugin.**", 1)[1]
    code = code.split("```python", 1)[1].split("```", 1)[0]
    namespace: dict = {"__name__": "readme_echo"}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - our own README
    plugin = namespace["EchoPlugin"]()
    assert plugin.validate_config({"greeting": "hi"}) == {"Greeting": "hi"}
    with pytest.raises(BadRequestError):
        plugin.validate_config({"Greeting": 5})
    host = PluginHost(settings=lambda: plugin.validate_config({"Greeting": "hi"}), data_dir=tmp_path,
                      server_version="1")
    [provider] = plugin.providers(host)
    found = asyncio.run(provider.search(LyricsQuery(title="Song")))
    assert found[0].Lyrics.Lyrics[0].Text == "hi Song" and "lyrics" in provider.provider_kinds


def test_builtin_providers_are_built_on_first_use_with_the_kinds_they_declare(tmp_path):
    """server/plugins/builtin.py: loading the plugins builds no built-in provider; asking for a
    kind builds the providers of the built-ins that declare it, once (the same objects after),
    and each built-in's declared kinds are exactly its providers' kinds."""
    from server.livetv.settings import SECTIONS as LIVETV_SECTIONS
    from server.metadata.settings import SECTIONS as METADATA_SECTIONS
    from server.paths import ServerPaths
    from server.plugins.builtin import builtin_plugins
    from server.plugins.manager import PluginManager
    from server.system.configuration import ConfigurationStore

    paths = ServerPaths(tmp_path)
    paths.ensure()
    config = ConfigurationStore(paths)
    config.register(*METADATA_SECTIONS)
    config.register(*LIVETV_SECTIONS)
    manager = PluginManager(config, tmp_path, lambda: builtin_plugins(config, schedules_direct_client=None))
    manager.load()
    builtins = [r for r in manager.list() if r.builtin]
    assert len(builtins) == 7
    assert all(r.pending is not None and r.providers == [] and r.status == "Active" for r in builtins)

    listings = manager.providers("listings")  # what a start asks (the Live TV listing sources)
    assert [type(p).__name__ for p in listings] == ["SchedulesDirectListings"]
    assert [r.name for r in builtins if r.pending is None] == ["Schedules Direct"]

    metadata = manager.providers("metadata")
    assert [p.name for p in metadata] == ["TheMovieDb", "MusicBrainz", "TVmaze"]
    assert manager.providers("metadata") == metadata and all(
        a is b for a, b in zip(manager.providers("metadata"), metadata, strict=True))
    assert [p.name for p in manager.providers("image")] == ["TheMovieDb", "MusicBrainz", "TVmaze", "Fanart.tv"]
    assert [p.name for p in manager.providers("subtitles")] == ["Open Subtitles"]
    assert [p.name for p in manager.providers("lyrics")] == ["LrcLib"]
    for record in builtins:
        assert record.pending is None and record.status == "Active"
        kinds = frozenset().union(*(p.provider_kinds for p in record.providers))
        assert kinds == record.plugin.lazy_provider_kinds, record.name
