"""The Reelroom icon with a badge telling the server's state (drawn with QPainter)."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, QSize
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QPainter, QPainterPath, QPen, QPixmap

# ``Qt`` (PySide6.QtCore's namespace) is imported where it is used: a drawn reel, a scanning pie, the
# error mark and the stop square, never the icons the tray shows from its start to "running".
# PySide makes the namespace's ~90 Python enums at its first use (~15 ms of the GIL, before the
# server's first 200 if the start used it).

STATES = ("starting", "running", "scanning", "error", "stopped")
BADGE_COLOURS = {
    "starting": "#f5a623",
    "running": "#2e9d4f",
    "scanning": "#1e88e5",
    "error": "#e53935",
    "stopped": "#8e8e8e",
}
BACKGROUND = "#3a2d6e"


def resources_dir() -> Path:
    """``resources/`` next to the packages, or inside a PyInstaller bundle."""
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"


ICON_SIZES = (16, 32, 48, 64, 128, 256, 512, 1024)


def icon_file(size: int, icons_dir: Path | None = None) -> Path:
    """The smallest ``resources/icons/reelroom-<n>.png`` at least ``size`` pixels wide (the largest if none)."""
    folder = icons_dir or resources_dir() / "icons"
    best = next((n for n in ICON_SIZES if n >= size), ICON_SIZES[-1])
    return folder / f"reelroom-{best}.png"


def app_icon_pixmap(size: int = 64, icon_path: Path | None = None) -> QPixmap:
    """The Reelroom icon from ``resources/icons`` (or ``icon_path``), scaled to ``size``; a drawn reel if missing.

    Scaled by QIcon's pixmap engine at a device pixel ratio of 1: the same pixels as
    ``QPixmap.scaled(size, size, KeepAspectRatio, SmoothTransformation)`` (the aspect ratio kept,
    smooth scaling), without the ``Qt`` namespace's enums (see above)."""
    path = icon_path or icon_file(size)
    if path.is_file():
        pixmap = QIcon(str(path)).pixmap(QSize(size, size), 1.0)
        if not pixmap.isNull():
            return pixmap
    return _drawn_reel(size)


def _drawn_reel(size: int) -> QPixmap:
    from PySide6.QtCore import Qt

    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(BACKGROUND))
    painter.drawRoundedRect(QRectF(0, 0, size, size), size * 0.2, size * 0.2)
    centre = QPointF(size / 2, size / 2)
    painter.setBrush(QColor("#ffffff"))
    painter.drawEllipse(centre, size * 0.34, size * 0.34)
    painter.setBrush(QColor(BACKGROUND))
    for dx, dy in ((0, -1), (0.95, -0.31), (0.59, 0.81), (-0.59, 0.81), (-0.95, -0.31)):
        painter.drawEllipse(QPointF(centre.x() + dx * size * 0.19, centre.y() + dy * size * 0.19),
                            size * 0.075, size * 0.075)
    painter.drawEllipse(centre, size * 0.04, size * 0.04)
    painter.end()
    return pixmap


def state_pixmap(state: str, progress: float | None = None, size: int = 64, icon_path: Path | None = None) -> QPixmap:
    """The app icon with a coloured badge in the lower right; scanning shows ``progress`` (0-100) as a pie.

    The badge is filled and outlined as paths with a pen and a brush made from colours
    (``_pen``/``_brush``), not through ``QPainter.setPen``/``setBrush``: those take a
    ``Qt.PenStyle``/``Qt.BrushStyle`` too, and PySide's choice between the overloads makes the
    ``Qt`` namespace's enums (see above). The badge's pixels are ``drawEllipse``'s with that pen
    and brush; the stop square's within 1/255 of ``drawRect``'s on a few edge pixels (rounding)."""
    if state not in BADGE_COLOURS:
        raise ValueError(f"unknown server state {state!r}")
    pixmap = app_icon_pixmap(size, icon_path)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    radius = size * 0.22
    centre = QPointF(size - radius - 1, size - radius - 1)
    badge = QRectF(centre.x() - radius, centre.y() - radius, 2 * radius, 2 * radius)
    colour = QColor(BADGE_COLOURS[state])
    white = QColor("#ffffff")
    circle = QPainterPath()
    circle.addEllipse(badge)
    painter.fillPath(circle, _brush(colour if state != "scanning" or progress is None else colour.lighter(170)))
    painter.strokePath(circle, _pen(white, max(1.0, size / 32)))
    if state == "scanning" and progress is not None:
        from PySide6.QtCore import Qt

        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        span = int(-360 * 16 * max(0.0, min(progress, 100.0)) / 100)
        painter.drawPie(badge.adjusted(1, 1, -1, -1), 90 * 16, span)
    if state == "error":
        from PySide6.QtCore import Qt

        painter.setPen(white)
        font = QFont()
        font.setBold(True)
        font.setPixelSize(int(radius * 1.5))
        painter.setFont(font)
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, "!")
    elif state == "stopped":
        side = radius * 0.8
        square = QPainterPath()
        square.addRect(QRectF(centre.x() - side / 2, centre.y() - side / 2, side, side))
        painter.fillPath(square, _brush(white))
        painter.strokePath(square, _pen(white, 1.0))
    painter.end()
    return pixmap


def _pen(colour: QColor, width: float) -> QPen:
    """A solid pen (square caps, bevel joins, as ``QPen(colour, width)``), made without ``Qt``'s enums."""
    pen = QPen()
    pen.setColor(colour)
    pen.setWidthF(width)
    return pen


def _brush(colour: QColor) -> QBrush:
    """A solid brush of ``colour`` (as ``QBrush(colour)``): a solid pen's, made without ``Qt``'s enums."""
    return _pen(colour, 1.0).brush()


def state_icon(state: str, progress: float | None = None, icon_path: Path | None = None) -> QIcon:
    icon = QIcon()
    for size in (16, 22, 32, 64):
        icon.addPixmap(state_pixmap(state, progress, size, icon_path))
    return icon
