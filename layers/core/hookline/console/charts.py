"""Charts drawn on the server as SVG markup (no chart library in the browser)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from hookline.records import frozen

WIDTH, HEIGHT, PAD = 480, 160, 24


@frozen
class Bar:
    """One hour's bar: where it is, how tall, and what it says to a screen reader."""

    x: float
    y: float
    width: float
    height: float
    label: str


def success_rate_bars(rows: list[dict[str, Any]], now: datetime) -> list[Bar]:
    """A bar per hour of the last 24 h: the share of attempts that got a 2xx (hours without
    attempts have no bar)."""
    start = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=23)
    slot = (WIDTH - 2 * PAD) / 24
    bars = []
    for row in rows:
        index = int((row["hour"] - start).total_seconds() // 3600)
        if not 0 <= index < 24 or not row["attempts"]:
            continue
        rate = row["succeeded"] / row["attempts"]
        height = max(rate * (HEIGHT - 2 * PAD), 1.0)
        bars.append(
            Bar(
                x=PAD + index * slot + 1,
                y=HEIGHT - PAD - height,
                width=slot - 2,
                height=height,
                label=f"{row['hour']:%H}:00 {rate:.0%} of {row['attempts']} attempts",
            )
        )
    return bars


@frozen
class Point:
    """One hour's value on a line: where it is and what it says to a screen reader."""

    x: float
    y: float
    label: str


@frozen
class Line:
    """A series of points (hours without a value are left out, so the line skips them)."""

    name: str
    points: list[Point]

    @property
    def path(self) -> str:
        """The polyline's `points` attribute."""
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)


def _slot_index(hour: datetime, now: datetime) -> int:
    start = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=23)
    return int((hour - start).total_seconds() // 3600)


def nice_ceiling(value: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten at or above `value` (a scale's top)."""
    step = 1.0
    while True:
        for m in (1, 2, 5):
            if m * step >= value:
                return m * step
        step *= 10


def latency_lines(rows: list[dict[str, Any]], now: datetime) -> tuple[list[Line], float]:
    """The attempts' p50 and p99 duration per hour of the last 24 h, and the scale's top in
    ms. A point sits in the middle of its hour's slot."""
    slot = (WIDTH - 2 * PAD) / 24
    inside = [r for r in rows if 0 <= _slot_index(r["hour"], now) < 24 and r["attempts"]]
    top = nice_ceiling(max([float(r["p99_ms"]) for r in inside] + [1.0]))
    lines = []
    for name, column in (("p50", "p50_ms"), ("p99", "p99_ms")):
        points = []
        for row in inside:
            value = float(row[column])
            points.append(
                Point(
                    x=PAD + (_slot_index(row["hour"], now) + 0.5) * slot,
                    y=HEIGHT - PAD - value / top * (HEIGHT - 2 * PAD),
                    label=f"{row['hour']:%H}:00 {name} {value:.0f} ms of {row['attempts']} "
                    "attempts",
                )
            )
        lines.append(Line(name, points))
    return lines, top


def backlog_bars(rows: list[dict[str, Any]], now: datetime) -> tuple[list[Bar], float]:
    """A bar per hour of the last 24 h: the deliveries unfinished at its end; and the scale's
    top (hours with none have no bar)."""
    slot = (WIDTH - 2 * PAD) / 24
    inside = [r for r in rows if 0 <= _slot_index(r["hour"], now) < 24]
    top = nice_ceiling(max([float(r["backlog"]) for r in inside] + [1.0]))
    bars = []
    for row in inside:
        if not row["backlog"]:
            continue
        height = max(row["backlog"] / top * (HEIGHT - 2 * PAD), 1.0)
        bars.append(
            Bar(
                x=PAD + _slot_index(row["hour"], now) * slot + 1,
                y=HEIGHT - PAD - height,
                width=slot - 2,
                height=height,
                label=f"{row['hour']:%H}:00 {row['backlog']} deliveries not finished",
            )
        )
    return bars, top
