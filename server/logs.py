"""The server's own log files: `<data>/log/reelroom.log`, rotated by size, one line per record:

    2026-11-22 10:00:00.123 [INF] reelroom.server: message
"""

from __future__ import annotations

import logging
import logging.handlers
import re
from pathlib import Path

LEVEL_TAGS = {"DEBUG": "DBG", "INFO": "INF", "WARNING": "WRN", "ERROR": "ERR", "CRITICAL": "FTL"}
LOG_FILE_NAME = "reelroom.log"


class _LevelTagFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        record.level_tag = LEVEL_TAGS.get(record.levelname, record.levelname[:3])
        return super().format(record)


_SECRET = re.compile(r"(?i)\b(api_key|apikey|x-emby-token|token)=([^&\s\"']+)")


class RedactSecrets(logging.Filter):
    """Keeps access tokens out of the log: uvicorn logs each WebSocket's URL, and clients put
    `api_key` there (and HLS URLs carry it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = _SECRET.sub(lambda m: f"{m.group(1)}=***", message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True


FORMATTER = _LevelTagFormatter("%(asctime)s.%(msecs)03d [%(level_tag)s] %(name)s: %(message)s", "%Y-%m-%d %H:%M:%S")


def configure_logging(log_dir: Path, level: int = logging.INFO, console: bool = True) -> logging.Handler:
    """Send the `reelroom` loggers (and uvicorn's) to a rotating file, and to stderr."""
    log_dir.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(
        log_dir / LOG_FILE_NAME, maxBytes=10 * 1024 * 1024, backupCount=9, encoding="utf-8", delay=False)
    handler.setFormatter(FORMATTER)
    handler.addFilter(RedactSecrets())
    handler.set_name("reelroom-file")
    for name in ("reelroom", "uvicorn.error", "litestar"):
        logger = logging.getLogger(name)
        logger.setLevel(level)
        for old in [h for h in logger.handlers if h.get_name() in ("reelroom-file", "reelroom-console")]:
            logger.removeHandler(old)
            old.close()
        logger.addHandler(handler)
        if console:
            stream = logging.StreamHandler()
            stream.setFormatter(FORMATTER)
            stream.addFilter(RedactSecrets())
            stream.set_name("reelroom-console")
            logger.addHandler(stream)
        logger.propagate = False
    return handler
