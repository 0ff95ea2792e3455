"""A paced, real-time MPEG-TS source on 127.0.0.1 for Live TV tests and benchmarks: every GET of
``/<name>.ts`` starts ``ffmpeg -re`` (a test pattern with a tone, H.264 + AAC, one keyframe a
second) and relays what it writes until the client goes away. ``/logo.png`` is a small PNG.
``connections`` counts the open upstream connections per path (a shared tuner stream is one)."""

from __future__ import annotations

import contextlib
import http.server
import io
import shutil
import subprocess
import threading
from collections import Counter


def _ffmpeg_args(seed: int) -> list[str]:
    return [shutil.which("ffmpeg") or "ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-re",
            "-f", "lavfi", "-i", f"testsrc2=size=320x240:rate=25,hue=h={seed * 40}",
            "-f", "lavfi", "-i", f"sine=frequency={440 + seed * 110}:sample_rate=48000",
            "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "25", "-pix_fmt", "yuv420p",
            "-c:a", "aac", "-b:a", "96k", "-f", "mpegts", "-flush_packets", "1", "pipe:1"]


def _logo() -> bytes:
    from PIL import Image

    img = Image.new("RGB", (64, 48), (200, 40, 40))
    for x in range(32):
        for y in range(48):
            img.putpixel((x, y), (40, 40, 200))
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


class LiveSource:
    def __init__(self) -> None:
        self.connections: Counter[str] = Counter()
        self.total: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen] = set()
        self.logo = _logo()
        source = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                path = self.path.split("?")[0]
                if path == "/logo.png":
                    self.send_response(200)
                    self.send_header("Content-Type", "image/png")
                    self.send_header("Content-Length", str(len(source.logo)))
                    self.end_headers()
                    self.wfile.write(source.logo)
                    return
                if not path.endswith(".ts"):
                    self.send_error(404)
                    return
                seed = sum(path.encode()) % 7
                proc = subprocess.Popen(_ffmpeg_args(seed), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
                with source._lock:
                    source._procs.add(proc)
                    source.connections[path] += 1
                    source.total[path] += 1
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "video/mp2t")
                    self.end_headers()
                    while chunk := proc.stdout.read1(65536):
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass
                finally:
                    proc.kill()
                    proc.wait()
                    with source._lock:
                        source._procs.discard(proc)
                        source.connections[path] -= 1

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def open_connections(self, path: str | None = None) -> int:
        with self._lock:
            return self.connections[path] if path else sum(self.connections.values())

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        with self._lock:
            procs = list(self._procs)
        for proc in procs:
            with contextlib.suppress(OSError):
                proc.kill()
