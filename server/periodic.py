"""``SaveEvery``: a periodic save per key (a playing video's position, a token's last activity) at
most once a period, in a table that holds only the keys of the last period."""

from __future__ import annotations

from typing import Any


class SaveEvery:
    """Whether a key's periodic save is due: at most once every ``seconds`` per key.

    A key last saved ``seconds`` ago or more counts as never saved, so such entries are dropped
    whenever the table has doubled since the last sweep: it holds the keys of the last ``seconds``
    (e.g. the videos playing now), not every key ever seen (every (user, item) that reported
    progress without a stop, every token that was ever used).
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._last: dict[Any, float] = {}
        self._sweep_at = 64

    def due(self, key: Any, now: float) -> bool:
        last = self._last.get(key)
        if last is not None and now - last < self.seconds:
            return False
        self._last[key] = now
        if len(self._last) >= self._sweep_at:
            self._last = {k: t for k, t in self._last.items() if now - t < self.seconds}
            self._sweep_at = max(64, 2 * len(self._last))
        return True

    def forget(self, key: Any) -> None:
        self._last.pop(key, None)

    def __len__(self) -> int:
        return len(self._last)
