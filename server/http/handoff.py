"""A hand-off of a client's connection to a reader process (server/readers/; Linux, macOS; see
"Reader processes" in docs/architecture.md).

The HTTP side that can let a reader write a reply itself (the Items lane, server/http/items_lane.py)
sets :data:`current` to an :class:`Offer` around the handler; the reader pool (server/readers/pool.py) then sends the
client's socket with the page's request (SCM_RIGHTS), the reader writes the reply's head (the
owner's, from :meth:`Offer.head`) and body straight to it, and the handler returns a
:class:`Handed` in place of the reply's bytes, which the HTTP side finishes (:meth:`Offer.finish`:
the response's bookkeeping, no bytes). Where no offer is made (the app's path, Windows, the
switch off) the reader's bytes come back to the owner as before (the relay).
"""

from __future__ import annotations

import contextvars
import socket
import sys
from dataclasses import dataclass
from typing import Protocol

#: Whether a client connection's socket can travel to another process (SCM_RIGHTS over a Unix
#: socket: Linux, macOS). Elsewhere (Windows) the owner relays a reader's reply.
FD_PASSING = hasattr(socket, "send_fds") and hasattr(socket, "AF_UNIX") and sys.platform != "win32"


class Offer(Protocol):
    #: set by the pool once the socket went to a reader (from then on the owner must not write
    #: to the connection until the reader answered), cleared when the reader answered without
    #: writing (an error: the owner answers)
    handed: bool

    def fd(self) -> int | None:
        """The client connection's socket, if a reader may write the reply to it now (nothing of
        the owner's waits to be written, no reply started, the connection open); else None."""

    async def head(self) -> tuple[bytes, bytes] | None:
        """The reply's head as the owner would write it, in two parts around its Content-Length
        value; None when it cannot be split so (the reply then comes back to the owner)."""

    def keeps(self) -> bool:
        """Whether the owner wants the reply's bytes (its whole-reply cache would keep them)."""


#: The offer of the request being handled (None: no hand-off, the reply comes back to the owner).
current: contextvars.ContextVar[Offer | None] = contextvars.ContextVar("reader_handoff", default=None)


@dataclass(frozen=True)
class Handed:
    """What the handler returns for a page a reader wrote to the client itself: the body's size
    (its Content-Length), the bytes of head and body the reader wrote, whether its write failed
    (the client went away: the owner closes the connection), and the bytes it did not write
    (the client stopped taking them: the owner writes them, with its flow control)."""

    length: int
    written: int
    failed: bool
    rest: bytes

    handed_off = True


class Lost(Exception):
    """The reader ended after the client's socket went to it: how much of the reply it wrote is
    unknown, so the connection must be closed (never answered again)."""
