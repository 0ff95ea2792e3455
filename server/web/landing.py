"""The page at ``/web/`` when this server hosts no web app: its name and address (with a QR code
for a phone), which apps work without the web app, and how to add it. Plain HTML and CSS, no
script; everything a visitor's text can reach is escaped."""

from __future__ import annotations

import html
import ipaddress
import logging
from functools import lru_cache
from typing import TYPE_CHECKING

import segno

from server.resources import resources_dir

if TYPE_CHECKING:
    from server.web.locate import WebLocation

log = logging.getLogger("reelroom.web")

NATIVE_APPS = [
    ("Jellyfin for Android TV", "Android TV, Google TV and Fire TV; its own TV interface."),
    ("Swiftfin", "iPhone, iPad and Apple TV."),
    ("Findroid", "Android phones and tablets."),
    ("Kodi with the Jellyfin add-on", "Jellyfin for Kodi or JellyCon, on any Kodi box."),
    ("Finamp, Symfonium, Feishin", "music players for phones and the desktop."),
    ("Infuse", "Apple devices (a commercial player)."),
]
WEB_APPS = ("a web browser, Jellyfin for Android and for iOS (phones and tablets), Jellyfin Media "
            "Player on the desktop, and the LG webOS and Samsung Tizen TV apps")

STYLE = """
:root{color-scheme:dark}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#11132e;color:#e8eaf6}
main{max-width:46rem;margin:0 auto;padding:2.5rem 1.5rem}
header{display:flex;gap:1rem;align-items:center}
header svg.logo{width:64px;height:64px;flex:none}
h1{font-size:1.7rem;margin:0}
h2{font-size:1.15rem;margin:2rem 0 .5rem;color:#ffc857}
.sub{margin:0;color:#b8bce0}
.card{background:#1b1e44;border-radius:14px;padding:1.25rem 1.5rem;margin-top:1.5rem}
.address{display:flex;gap:1.5rem;align-items:center;flex-wrap:wrap}
.qr{background:#fff;border-radius:10px;padding:8px;line-height:0}
.url{font:600 1.35rem ui-monospace,Menlo,Consolas,monospace;word-break:break-all;color:#fff}
code,kbd{font-family:ui-monospace,Menlo,Consolas,monospace;background:#0c0e24;border-radius:6px;padding:.1rem .35rem}
pre{background:#0c0e24;border-radius:8px;padding:.75rem 1rem;overflow-x:auto}
ul{padding-left:1.2rem}li{margin:.25rem 0}
.note{color:#ff9f7a}
footer{margin-top:2.5rem;color:#8b90c0;font-size:.9rem}
"""


@lru_cache(maxsize=1)
def _logo() -> str:
    try:
        svg = (resources_dir() / "icons" / "reelroom.svg").read_text(encoding="utf-8")
    except OSError:
        return ""
    return svg.replace("<svg ", '<svg class="logo" aria-hidden="true" ', 1)


@lru_cache(maxsize=64)
def qr_svg(text: str) -> str:
    """An inline SVG QR code of ``text`` ("" when it cannot be one, e.g. an absurdly long Host)."""
    if len(text) > 512:
        return ""
    try:
        return segno.make(text, error="m").svg_inline(scale=5, border=2, dark="#11132e", light="#ffffff",
                                                      title=f"QR code: {text}")
    except (segno.DataOverflowError, ValueError):
        return ""


def _host_header(scope: dict) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"host":
            return value.decode("latin-1")
    return None


def _is_loopback(host: str) -> bool:
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 or host.startswith("[") else host
    name = name.strip("[]")
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def server_address(port: int, scope: dict) -> str:
    """The address other devices should use: the Host this page was reached on, unless that is
    loopback, then this machine's LAN address."""
    host = _host_header(scope)
    if host and not _is_loopback(host):
        return f"http://{host}"
    from server.net.discovery import local_address_for

    lan = local_address_for("192.0.2.1")  # the interface of the default route; nothing is sent
    if ":" in lan:
        lan = f"[{lan}]"
    return f"http://{lan}:{port}"


def landing_page(server_name: str, port: int, scope: dict, location: WebLocation) -> bytes:
    name = html.escape(server_name)
    address = server_address(port, scope)
    hosting_off = location.reason.startswith("Hosting the web app is turned off")
    reason = html.escape(location.reason)
    native = "\n".join(f"<li><strong>{html.escape(app)}</strong>: {html.escape(where)}</li>"
                       for app, where in NATIVE_APPS)
    if hosting_off:
        how = ("<p>This server was started with hosting turned off (<code>--no-web</code>, "
               "<code>REELROOM_NO_WEB</code>, or <code>HostWebClient: false</code> in the "
               "<code>web</code> settings). Start it without that to host the web app here again.</p>")
    else:
        how = """
<ul>
<li><strong>Desktop app</strong>: in the Reelroom tray menu choose <em>Install web app…</em> and pick a
jellyfin-web 10.10 release (a <code>.tar.gz</code>, <code>.tar.xz</code> or <code>.zip</code>) or its
unpacked folder.</li>
<li><strong>Headless server</strong>: run
<pre>reelroom-server --install-web PATH_OR_URL [--sha256 HEX]</pre>
with the same <code>--data-dir</code> as the server, then reload this page.</li>
<li><strong>A folder you already have</strong>: start the server with <code>--web-dir DIR</code>
(or <code>REELROOM_WEB_DIR</code>).</li>
</ul>
<p>The web app is Jellyfin's own, jellyfin-web 10.10.7 (GPL-2.0-or-later): take the built copy from
Jellyfin's downloads, or build it from the <code>v10.10.7</code> tag of
<code>github.com/jellyfin/jellyfin-web</code> with <code>npm ci &amp;&amp; npm run build:production</code>
and install its <code>dist</code> folder.</p>"""
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<title>{name} · Reelroom</title>
<style>{STYLE}</style></head>
<body><main>
<header>{_logo()}<div><h1>{name}</h1><p class="sub">Reelroom media server is running.</p></div></header>

<section class="card address">
<div class="qr">{qr_svg(address)}</div>
<div><p class="sub">Server address</p><p class="url">{html.escape(address)}</p>
<p>Add this address as the server in a Jellyfin app, or scan the code with your phone.</p></div>
</section>

<p class="note">{reason} The Jellyfin web app is not available from this server yet.</p>

<h2>Apps that work now</h2>
<p>These apps have their own interface and need nothing else from the server:</p>
<ul>
{native}
</ul>
<p>These load the web app from the server, so they need it: {WEB_APPS}.</p>

<h2>Add the web app</h2>
{how}
<footer>Reelroom speaks the Jellyfin 10.10 API.</footer>
</main></body></html>
"""
    return page.encode("utf-8")
