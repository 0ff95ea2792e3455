"""Live channel streams: one upstream connection per open channel (a *tuner stream*), shared by
every viewer of that channel, and live HLS made from it by ffmpeg.

- Opening a channel (``open``) takes a tuner slot: a tuner host with ``TunerCount`` n > 0 plays
  at most n different channels at once (more answer 503 with a clear message); viewers of a
  channel that is already open share its stream. Each open gets a LiveStreamId; the stream ends
  when its last LiveStreamId is closed (CloseLiveStream, a playback-stopped report) or when
  nothing has read from it for ``idle_seconds``.
- An http(s) source is relayed as it comes (no ffmpeg, so no input probing before the first
  byte); anything else (udp, rtp, an HLS source) goes through ``ffmpeg -c copy`` with a small
  probe. The last few MB are kept, so a second viewer (or the HLS encoder) starts at the latest
  keyframe at once instead of waiting for the next one.
- ``probe`` describes the stream (MediaStreams) from the first ``PROBE_BYTES``/``PROBE_SECONDS``
  of it with PyAV, bounded in size and time.
- ``LiveHls``: ffmpeg reads the tuner stream (from a one-connection loopback feed) and writes a sliding-window playlist
  (``live.m3u8``) with short segments, copying the codecs the client accepts and transcoding
  the rest (libx264 / AAC). Several viewers with the same codec needs share one encoder. It is
  stopped when no playlist or segment was asked for in ``hls_idle_seconds``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from server.errors import BadRequestError, NotFoundError, ServiceUnavailableError
from server.guid import normalize_guid
from server.media import spawn
from server.playback.hls_service import Segment
from server.playback.pipe import FfmpegPipe

if TYPE_CHECKING:
    from server.livetv.tuners import Channel

log = logging.getLogger("reelroom.livetv")

TS_PACKET = 188
KEEP_BYTES = 4 * 1024 * 1024  # recent bytes kept for the next viewer to start from
QUEUE_CHUNKS = 2048  # a viewer further behind than this is dropped
PROBE_BYTES = 400_000
PROBE_SECONDS = 0.6
PROBE_STEP = 0.12
SEGMENT_SECONDS = 2
FIRST_SEGMENT_SECONDS = 1


def ts_start(data: bytes, keyframe: bool = True) -> int:
    """Where a new viewer should start in ``data`` (recent MPEG-TS bytes): the last packet that
    begins a random access point (a keyframe) if one is found (and ``keyframe``), else the first
    packet boundary."""
    first = -1
    for i in range(min(len(data), TS_PACKET * 4)):
        if data[i] == 0x47 and all(data[j] == 0x47 for j in range(i + TS_PACKET, min(len(data), i + TS_PACKET * 3),
                                                                    TS_PACKET)):
            first = i
            break
    if first < 0:
        return 0
    if not keyframe:
        return first
    best = -1
    for i in range(first, len(data) - TS_PACKET + 1, TS_PACKET):
        if data[i] != 0x47:
            break
        # payload_unit_start, an adaptation field, random_access_indicator
        if data[i + 1] & 0x40 and data[i + 3] & 0x20 and data[i + 4] > 0 and data[i + 5] & 0x40:
            best = i
    return best if best >= 0 else first


@dataclass
class TunerStream:
    """One channel's upstream connection and its viewers."""

    channel: Channel
    tuner_id: str
    opens: set[str] = field(default_factory=set)
    subscribers: set[asyncio.Queue] = field(default_factory=set)
    recent: deque = field(default_factory=deque)
    recent_bytes: int = 0
    total_bytes: int = 0
    got_data: asyncio.Event = field(default_factory=asyncio.Event)
    ended: bool = False
    error: str | None = None
    task: asyncio.Task | None = None
    proc: asyncio.subprocess.Process | None = None
    last_activity: float = field(default_factory=time.monotonic)
    opened_at: float = field(default_factory=time.monotonic)
    media_streams: list[dict] | None = None
    probe_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    hls: dict[tuple, LiveHls] = field(default_factory=dict)

    def push(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.recent.append(chunk)
        self.recent_bytes += len(chunk)
        self.total_bytes += len(chunk)
        while self.recent_bytes - len(self.recent[0]) > KEEP_BYTES:
            self.recent_bytes -= len(self.recent.popleft())
        for q in list(self.subscribers):
            if q.qsize() >= QUEUE_CHUNKS:  # too slow: let it go rather than hold memory
                self.subscribers.discard(q)
                q.put_nowait(None)
            else:
                q.put_nowait(chunk)
        self.got_data.set()

    def subscribe(self, from_start: bool = False) -> asyncio.Queue:
        """A queue of the stream's bytes, starting at the latest keyframe kept; ``from_start``:
        at the stream's first byte when all of it is still kept (a recording that opened it)."""
        q: asyncio.Queue = asyncio.Queue()
        if self.recent:
            data = b"".join(self.recent)
            whole = from_start and self.total_bytes == self.recent_bytes
            q.put_nowait(data[ts_start(data, keyframe=not whole):])
        if self.ended:
            q.put_nowait(None)
        else:
            self.subscribers.add(q)
        self.last_activity = time.monotonic()
        return q

    def unsubscribe(self, q: asyncio.Queue) -> None:
        self.subscribers.discard(q)
        self.last_activity = time.monotonic()

    def finish(self, error: str | None = None) -> None:
        if self.ended:
            return
        self.ended = True
        self.error = self.error or error
        for q in list(self.subscribers):
            q.put_nowait(None)
        self.subscribers.clear()
        self.got_data.set()


class LiveHls:
    """ffmpeg turning a tuner stream into a sliding-window HLS playlist."""

    def __init__(self, stream: TunerStream, folder: Path, copy_video: bool, copy_audio: bool) -> None:
        self.id = uuid.uuid4().hex
        self.stream = stream
        self.folder = folder / self.id
        self.copy_video = copy_video
        self.copy_audio = copy_audio
        self.proc: asyncio.subprocess.Process | None = None
        self.feeder: asyncio.AbstractServer | None = None
        self.feed_url = ""
        self.last_request = time.monotonic()
        self.closed = False

    @property
    def playlist(self) -> Path:
        return self.folder / "live.m3u8"

    def args(self, ffmpeg: str) -> list[str]:
        kinds = {s.get("Type") for s in self.stream.media_streams or []}
        has_video = "Video" in kinds or not kinds
        has_audio = "Audio" in kinds or not kinds
        out = [ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-fflags", "+genpts+discardcorrupt",
               "-probesize", str(PROBE_BYTES), "-analyzeduration", str(int(PROBE_SECONDS * 1_000_000)),
               "-f", "mpegts", "-i", self.feed_url]
        if has_video:
            out += ["-map", "0:v:0"]
            if self.copy_video:
                out += ["-c:v", "copy"]
            else:
                out += ["-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-pix_fmt", "yuv420p",
                        "-force_key_frames", f"expr:gte(t,n_forced*{FIRST_SEGMENT_SECONDS})"]
        if has_audio:
            out += ["-map", "0:a:0?"]
            out += ["-c:a", "copy"] if self.copy_audio else ["-c:a", "aac", "-ac", "2", "-b:a", "160k"]
        out += ["-f", "hls", "-hls_time", str(SEGMENT_SECONDS), "-hls_init_time", str(FIRST_SEGMENT_SECONDS),
                "-hls_list_size", "8", "-hls_flags", "delete_segments+omit_endlist+independent_segments+temp_file",
                "-start_number", "0", "-hls_segment_filename", str(self.folder / "%d.ts"), str(self.playlist)]
        return out

    async def start(self, ffmpeg: str) -> None:
        await asyncio.to_thread(self.folder.mkdir, parents=True, exist_ok=True)
        self.feeder, self.feed_url = await feed_server(self.stream)
        try:
            self.proc = await spawn.exec_async(*self.args(ffmpeg), stdin=asyncio.subprocess.DEVNULL,
                                               stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
                                               start_new_session=True)
        except OSError:
            self.feeder.close()
            raise

    async def stop(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.feeder is not None:
            self.feeder.close()
        proc = self.proc
        if proc is not None and proc.returncode is None:
            spawn.kill(proc)
            with contextlib.suppress(Exception):
                await proc.wait()
        await asyncio.to_thread(shutil.rmtree, self.folder, True)

    async def wait_playlist(self, timeout: float = 20.0) -> str:
        """The playlist once it lists a segment."""
        deadline = time.monotonic() + timeout
        while True:
            self.last_request = time.monotonic()
            text = await asyncio.to_thread(_read_text, self.playlist)
            if text and "#EXTINF" in text:
                return text
            if self.proc is not None and self.proc.returncode is not None:
                err = (await self.proc.stderr.read()).decode("utf-8", "replace").strip().splitlines()
                raise ServiceUnavailableError("The live stream could not be segmented: "
                                              + (err[-1] if err else f"ffmpeg exited with {self.proc.returncode}"))
            if self.stream.ended and not self.stream.subscribers:
                raise ServiceUnavailableError(f"The channel stopped sending: {self.stream.error or 'no data'}")
            if time.monotonic() > deadline:
                raise ServiceUnavailableError("The live stream has no segment yet; try again.")
            await asyncio.sleep(0.05)

    async def segment(self, number: int, timeout: float = 15.0) -> bytes:
        self.last_request = time.monotonic()
        path = self.folder / f"{number}.ts"
        deadline = time.monotonic() + timeout
        while True:
            data = await asyncio.to_thread(_read_bytes, path)
            if data is not None:
                return data
            if self.closed or time.monotonic() > deadline:
                raise NotFoundError(f"Segment {number} of this live stream is not available.")
            await asyncio.sleep(0.05)


async def feed_server(stream: TunerStream, from_start: bool = False) -> tuple[asyncio.AbstractServer, str]:
    """A loopback TCP listener that hands the tuner stream to the first process that connects
    (an ffmpeg started with ``-i tcp://...``) and then stops listening. Helper processes never
    take stdin (server/media/spawn.py), so this is how they read a shared stream."""
    served = False

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal served
        if served:
            writer.close()
            return
        served = True
        server.close()
        queue = stream.subscribe(from_start)
        try:
            while (chunk := await queue.get()) is not None:
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            stream.unsubscribe(queue)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"tcp://127.0.0.1:{port}"


def _codec_set(value: str | None, default: tuple[str, ...]) -> set[str]:
    found = {c.strip().lower() for c in (value or "").split(",") if c.strip()}
    return found or set(default)


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


class LiveStreamManager:
    def __init__(self, livetv, ffmpeg_path: Callable[[], str], temp_dir: Path) -> None:
        self.livetv = livetv
        self.ffmpeg_path = ffmpeg_path
        self.temp_dir = temp_dir
        self.streams: dict[str, TunerStream] = {}  # by channel id
        self.by_live_id: dict[str, TunerStream] = {}
        self.idle_seconds = 30.0
        self.hls_idle_seconds = 30.0
        self._monitor: asyncio.Task | None = None
        self._lock = asyncio.Lock()

    # -- opening and closing ------------------------------------------------------------

    def _tuner(self, tuner_id: str):
        return next((h for h in self.livetv.options().TunerHosts or [] if h.Id == tuner_id), None)

    async def open(self, channel) -> tuple[str, TunerStream]:
        """A new LiveStreamId on the channel's tuner stream (started if needed); 503 when
        every tuner of its host is busy with other channels."""
        async with self._lock:
            stream = self.streams.get(channel.id)
            if stream is None or stream.ended:
                tuner = self._tuner(channel.tuner_id)
                limit = (tuner.TunerCount or 0) if tuner is not None else 0
                busy = [s for s in self.streams.values() if s.tuner_id == channel.tuner_id and not s.ended]
                if limit and len(busy) >= limit:
                    name = (tuner.FriendlyName or tuner.Url) if tuner is not None else channel.tuner_id
                    playing = ", ".join(sorted(s.channel.name for s in busy))
                    raise ServiceUnavailableError(
                        f"All {limit} tuner(s) of {name} are in use ({playing}). Stop watching or recording "
                        f"one of those channels, or raise the tuner's limit.")
                stream = TunerStream(channel=channel, tuner_id=channel.tuner_id)
                self.streams[channel.id] = stream
                stream.task = asyncio.create_task(self._read_upstream(stream), name=f"live-{channel.id}")
                self._ensure_monitor()
            live_id = uuid.uuid4().hex
            stream.opens.add(live_id)
            stream.last_activity = time.monotonic()
            self.by_live_id[live_id] = stream
            return live_id, stream

    def get(self, live_id: str | None) -> TunerStream | None:
        return self.by_live_id.get(live_id or "")

    def for_channel(self, channel_id: str) -> TunerStream | None:
        stream = self.streams.get(channel_id)
        return stream if stream is not None and not stream.ended else None

    async def close(self, live_id: str | None) -> bool:
        stream = self.by_live_id.pop(live_id or "", None)
        if stream is None:
            return False
        stream.opens.discard(live_id)
        if not stream.opens:
            await self._stop(stream)
        return True

    async def _stop(self, stream: TunerStream) -> None:
        for hls in list(stream.hls.values()):
            await hls.stop()
        stream.hls.clear()
        for live_id in list(stream.opens):
            self.by_live_id.pop(live_id, None)
        stream.opens.clear()
        stream.finish()
        if stream.task is not None and not stream.task.done():
            stream.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await stream.task
        if self.streams.get(stream.channel.id) is stream:
            del self.streams[stream.channel.id]
        log.info("Live stream of %s closed", stream.channel.name)

    async def close_all(self) -> None:
        if self._monitor is not None:
            self._monitor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._monitor
            self._monitor = None
        for stream in list(self.streams.values()):
            await self._stop(stream)

    # -- upstream ------------------------------------------------------------------------

    async def _read_upstream(self, stream: TunerStream) -> None:
        url = stream.channel.url
        try:
            direct = url.startswith(("http://", "https://")) and ".m3u8" not in url.lower()
            if direct:
                await self._read_http(stream, url)
            else:
                await self._read_ffmpeg(stream, url)
            stream.finish("the channel's stream ended")
        except asyncio.CancelledError:
            stream.finish()
            raise
        except Exception as exc:
            log.warning("Live stream of %s failed: %s", stream.channel.name, exc)
            stream.finish(str(exc) or type(exc).__name__)

    async def _read_http(self, stream: TunerStream, url: str) -> None:
        import httpx  # loaded when first needed, not at start-up
        timeout = httpx.Timeout(10.0, read=30.0)
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=True) as client:
            async with client.stream("GET", url) as reply:
                if reply.status_code != 200:
                    raise OSError(f"{url} answered {reply.status_code}")
                kind = reply.headers.get("content-type", "").lower()
                if "mpegurl" in kind:  # an HLS source after all: let ffmpeg follow it
                    await reply.aclose()
                    await self._read_ffmpeg(stream, url)
                    return
                async for chunk in reply.aiter_raw():
                    stream.push(chunk)

    async def _read_ffmpeg(self, stream: TunerStream, url: str) -> None:
        ffmpeg = await asyncio.to_thread(self.ffmpeg_path)
        pipe = await FfmpegPipe.start(ffmpeg, [
            "-nostdin", "-hide_banner", "-loglevel", "error", "-probesize", "65536", "-analyzeduration", "0",
            "-fflags", "+nobuffer", "-i", url, "-map", "0", "-c", "copy", "-f", "mpegts", "pipe:1"])
        stream.proc = pipe.proc
        async for chunk in pipe.chunks(65536):  # ends (and kills ffmpeg) however the reading ends
            stream.push(chunk)

    async def wait_for_data(self, stream: TunerStream, timeout: float = 10.0) -> None:
        try:
            await asyncio.wait_for(stream.got_data.wait(), timeout)
        except TimeoutError:
            raise ServiceUnavailableError(f"{stream.channel.name} sent nothing within {timeout:.0f} s.") from None
        if stream.total_bytes == 0:
            raise ServiceUnavailableError(f"{stream.channel.name} could not be tuned: {stream.error or 'no data'}")

    # -- probing -------------------------------------------------------------------------

    async def probe(self, stream: TunerStream) -> list[dict]:
        """MediaStreams of the channel from its first bytes (at most PROBE_BYTES or
        PROBE_SECONDS of waiting), probed with PyAV; cached on the stream."""
        async with stream.probe_lock:
            if stream.media_streams is not None:
                return stream.media_streams
            await self.wait_for_data(stream)
            # Probe what has come so far every PROBE_STEP s; done as soon as the video's size and
            # an audio stream are known, at the latest after PROBE_SECONDS or PROBE_BYTES.
            deadline = time.monotonic() + PROBE_SECONDS
            media: list[dict] = []
            while True:
                await asyncio.sleep(PROBE_STEP)
                data = b"".join(stream.recent)
                media = await asyncio.to_thread(_probe_bytes, data[:PROBE_BYTES * 2])
                video = next((m for m in media if m.get("Type") == "Video"), None)
                audio = next((m for m in media if m.get("Type") == "Audio"), None)
                if (video is not None and video.get("Width") and audio is not None) or stream.ended \
                        or stream.recent_bytes >= PROBE_BYTES or time.monotonic() >= deadline:
                    break
            stream.media_streams = media
            return stream.media_streams

    # -- live HLS ------------------------------------------------------------------------

    async def hls_for(self, stream: TunerStream, video_codecs: set[str], audio_codecs: set[str]) -> LiveHls:
        media = stream.media_streams or []
        video = next((s for s in media if s.get("Type") == "Video"), None)
        audio = next((s for s in media if s.get("Type") == "Audio"), None)
        copy_video = bool(video and (video.get("Codec") or "").lower() in video_codecs)
        copy_audio = bool(audio and (audio.get("Codec") or "").lower() in audio_codecs)
        key = (copy_video, copy_audio)
        async with self._lock:
            job = stream.hls.get(key)
            if job is not None and not job.closed and (job.proc is None or job.proc.returncode is None):
                return job
            if job is not None:
                await job.stop()  # its encoder ended: start a new one
            job = LiveHls(stream, self.temp_dir, copy_video, copy_audio)
            stream.hls[key] = job
            await job.start(await asyncio.to_thread(self.ffmpeg_path))
            return job

    def hls_job(self, job_id: str) -> LiveHls | None:
        for stream in self.streams.values():
            for job in stream.hls.values():
                if job.id == job_id and not job.closed:
                    return job
        return None

    async def channel_playlist(self, channel: Channel, live_stream_id: str | None, video_codecs: str | None,
                               audio_codecs: str | None) -> str:
        """A channel's sliding-window playlist, its segment URLs under the encoder's id
        (``hls/{encoder}/{n}.ts``, the legacy segment route). The stream is the one
        ``live_stream_id`` names; without one, the channel's running stream or a new one
        (released when idle). Codecs: comma lists the client takes (copied when the channel's
        match, else transcoded)."""
        from server.livetv.playback import DEFAULT_AUDIO_CODECS, DEFAULT_VIDEO_CODECS

        stream = self.get(live_stream_id)
        if stream is None or stream.channel.id != channel.id:
            stream = self.for_channel(channel.id)
            if stream is None:
                _, stream = await self.open(channel)
        await self.probe(stream)
        job = await self.hls_for(stream, _codec_set(video_codecs, DEFAULT_VIDEO_CODECS),
                                 _codec_set(audio_codecs, DEFAULT_AUDIO_CODECS))
        text = await job.wait_playlist()
        lines = [f"hls/{job.id}/{line.strip()}" if line.strip() and not line.startswith("#") else line
                 for line in text.splitlines()]
        return "\n".join(lines) + "\n"

    async def hls_segment(self, job: LiveHls, segment_id: str, container: str) -> Segment:
        """Segment ``segment_id`` of a live encoder, once written (404 for anything else)."""
        if not segment_id.isdigit() or container.lower() != "ts":
            raise NotFoundError("No such live segment.")
        return Segment(await job.segment(int(segment_id)), "video/mp2t")

    # -- the stream itself (GetLiveStreamFile) ---------------------------------------------

    async def channel(self, channel_id: str) -> Channel | None:
        """The channel with this id (either GUID form), or None."""
        key = normalize_guid(channel_id)
        return next((c for c in await self.livetv.channels() if c.id == key), None) if key else None

    async def relay(self, stream_id: str, container: str) -> AsyncIterator[bytes]:
        """An opened live stream (its LiveStreamId), or a channel by id, as MPEG-TS from the
        shared tuner stream: returns the byte iterator once data flows (503 when the channel
        sends nothing). A stream opened here is closed when the iteration ends."""
        if container.lower() not in ("ts", "mpegts"):
            raise BadRequestError("Live streams are offered as ts.")
        stream = self.get(stream_id)
        own_open = None
        if stream is None:
            channel = await self.channel(stream_id)
            if channel is None:
                raise NotFoundError(f"No live stream {stream_id}.")
            own_open, stream = await self.open(channel)
        try:
            await self.wait_for_data(stream)
        except Exception:
            if own_open:
                await self.close(own_open)
            raise
        queue = stream.subscribe()

        async def chunks() -> AsyncIterator[bytes]:
            try:
                while (chunk := await queue.get()) is not None:
                    yield chunk
            finally:
                stream.unsubscribe(queue)
                if own_open:
                    await self.close(own_open)

        return chunks()

    # -- idle streams ----------------------------------------------------------------------

    def _ensure_monitor(self) -> None:
        if self._monitor is None or self._monitor.done():
            self._monitor = asyncio.create_task(self._watch(), name="live-stream-monitor")

    async def _watch(self) -> None:
        while self.streams:
            await asyncio.sleep(2.0)
            now = time.monotonic()
            for stream in list(self.streams.values()):
                for key, job in list(stream.hls.items()):
                    if now - job.last_request > self.hls_idle_seconds:
                        await job.stop()
                        stream.hls.pop(key, None)
                if stream.ended and not stream.subscribers:
                    await self._stop(stream)
                elif not stream.subscribers and not stream.hls and now - stream.last_activity > self.idle_seconds:
                    log.info("Closing the idle live stream of %s", stream.channel.name)
                    await self._stop(stream)


def _probe_bytes(data: bytes) -> list[dict]:
    from server.media.probe import ProbeError, probe_file

    if not data:
        return []
    with tempfile.NamedTemporaryFile(suffix=".ts", delete=False) as f:
        f.write(data)
        name = f.name
    try:
        probe = probe_file(name, is_audio=False, timeout=2.0)
        return [s.to_wire() for s in probe.streams]
    except ProbeError:
        return []
    finally:
        Path(name).unlink(missing_ok=True)
