"""Charts drawn on the server as SVG markup (no chart library in the browser)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

WIDTH, HEIGHT, PAD = 480, 160, 24


@dataclass(frozen=True)
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
