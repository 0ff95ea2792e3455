"""A raw HTTP/1.1 client connection for tests that compare replies byte for byte (the Items lane,
the reader hand-off): requests written as bytes, replies read as sent, framed by Content-Length."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from tests.conftest import LiveServer


class RawConnection:
    """One keep-alive connection to a live server, read reply by reply."""

    def __init__(self, live: LiveServer, rcvbuf: int = 0) -> None:
        where = urlsplit(live.url)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:  # before connect, so the window the server sees is small from the start
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(30)
        self.sock.connect((where.hostname, where.port))
        self.buf = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _fill(self) -> None:
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("closed")
        self.buf += chunk

    def raw_reply(self, head_only: bool = False) -> tuple[bytes, bytes]:
        """The next reply's head (as sent, without the blank line) and body (none after a HEAD)."""
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        length = 0
        if not head_only:
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
        while len(self.buf) < length:
            self._fill()
        body, self.buf = self.buf[:length], self.buf[length:]
        return head, body

    def closed(self, timeout: float = 10) -> bool:
        """The server closed the connection (nothing more to read)."""
        self.sock.settimeout(timeout)
        try:
            return self.buf == b"" and self.sock.recv(1) == b""
        except OSError:
            return True

    def close(self) -> None:
        self.sock.close()
