"""One Reelroom per user and data folder: a second launch tells the first to show itself."""

from __future__ import annotations

import getpass
import hashlib
from pathlib import Path

import shiboken6
from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

SHOW = "show"


def instance_name(data_dir: Path) -> str:
    """A local-socket name unique to this user and data folder."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "user"
    digest = hashlib.sha256(f"{user}\0{Path(data_dir).expanduser().resolve()}".encode()).hexdigest()[:16]
    return f"reelroom-{digest}"


class SingleInstance(QObject):
    """Claim the name with ``claim()``; the first instance emits ``messageReceived`` for later launches."""

    messageReceived = Signal(str)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._server: QLocalServer | None = None
        self._sockets: list[QLocalSocket] = []
        self._buffers: dict[int, bytearray] = {}

    @property
    def is_primary(self) -> bool:
        return self._server is not None and self._server.isListening()

    def send(self, message: str = SHOW, timeout_ms: int = 1000) -> bool:
        """Deliver ``message`` to a running instance; False if none answers."""
        socket = QLocalSocket()
        socket.connectToServer(self.name)
        if not socket.waitForConnected(timeout_ms):
            return False
        socket.write((message + "\n").encode("utf-8"))
        sent = socket.waitForBytesWritten(timeout_ms)
        socket.disconnectFromServer()
        if socket.state() != QLocalSocket.LocalSocketState.UnconnectedState:
            socket.waitForDisconnected(timeout_ms)
        return sent

    def claim(self, message: str = SHOW) -> bool:
        """True if this process is now the only instance; False after handing ``message`` to the running one."""
        if self.send(message):
            return False
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self.name):
            # A crashed instance can leave its socket file behind; nobody answered, so remove it.
            QLocalServer.removeServer(self.name)
            if not server.listen(self.name):
                raise RuntimeError(f"Cannot listen on local socket {self.name}: {server.errorString()}")
        server.newConnection.connect(self._accept)
        self._server = server
        return True

    def release(self) -> None:
        """Stop answering later launches."""
        for socket in self._sockets:
            if shiboken6.isValid(socket):
                socket.readyRead.disconnect()
                socket.disconnected.disconnect()
                socket.abort()
                socket.deleteLater()
        self._sockets.clear()
        if self._server is not None:
            self._server.close()
            self._server = None

    def _accept(self) -> None:
        assert self._server is not None
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            self._sockets.append(socket)
            self._buffers[id(socket)] = bytearray()
            socket.readyRead.connect(self._read)
            socket.disconnected.connect(self._drop)
            if socket.bytesAvailable():
                self._read_from(socket)

    def _read(self) -> None:
        socket = self.sender()
        if isinstance(socket, QLocalSocket):
            self._read_from(socket)

    def _read_from(self, socket: QLocalSocket) -> None:
        buffer = self._buffers.setdefault(id(socket), bytearray())
        buffer.extend(bytes(socket.readAll().data()))
        while b"\n" in buffer:
            line, _, rest = bytes(buffer).partition(b"\n")
            buffer[:] = rest
            self.messageReceived.emit(line.decode("utf-8", errors="replace").strip())

    def _drop(self) -> None:
        socket = self.sender()
        if isinstance(socket, QLocalSocket) and socket in self._sockets:
            if socket.isOpen():
                self._read_from(socket)
            self._sockets.remove(socket)
            self._buffers.pop(id(socket), None)
            socket.deleteLater()
