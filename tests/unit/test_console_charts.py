"""The status page's charts: an hour's point or bar sits in its slot, scaled to a round top,
and says its value to a screen reader; hours outside the last 24 are left out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hookline.console.charts import (
    HEIGHT,
    PAD,
    WIDTH,
    backlog_bars,
    latency_lines,
    nice_ceiling,
)

NOW = datetime(2026, 12, 1, 12, 30, tzinfo=UTC)
THIS_HOUR = NOW.replace(minute=0)


@pytest.mark.parametrize(
    ("value", "top"), [(0.4, 1), (1, 1), (1.5, 2), (3, 5), (7, 10), (120, 200), (4200, 5000)]
)
def test_a_scale_tops_at_the_next_round_number(value: float, top: float) -> None:
    assert nice_ceiling(value) == top


def test_latency_has_a_p50_and_a_p99_point_per_hour_with_attempts() -> None:
    rows = [
        {"hour": THIS_HOUR - timedelta(hours=2), "attempts": 4, "p50_ms": 40.0, "p99_ms": 180.0},
        {"hour": THIS_HOUR, "attempts": 2, "p50_ms": 20.0, "p99_ms": 90.0},
        {"hour": THIS_HOUR - timedelta(hours=30), "attempts": 9, "p50_ms": 1.0, "p99_ms": 9e3},
    ]
    (p50, p99), top = latency_lines(rows, NOW)
    assert top == 200  # the day's highest p99 (180 ms), rounded up; the older hour left out
    assert [p.label for p in p99.points] == [
        "10:00 p99 180 ms of 4 attempts",
        "12:00 p99 90 ms of 2 attempts",
    ]
    assert p50.points[-1].x > p50.points[0].x  # later hours further right
    assert p99.points[0].y == pytest.approx(HEIGHT - PAD - 180 / 200 * (HEIGHT - 2 * PAD))
    assert PAD < p99.points[-1].x < WIDTH - PAD
    assert p99.path.count(",") == 2


def test_backlog_bars_skip_empty_hours() -> None:
    rows = [
        {"hour": THIS_HOUR - timedelta(hours=h), "backlog": n}
        for h, n in ((23, 0), (5, 3), (0, 12))
    ]
    bars, top = backlog_bars(rows, NOW)
    assert top == 20
    assert [b.label for b in bars] == [
        "07:00 3 deliveries not finished",
        "12:00 12 deliveries not finished",
    ]
    assert bars[1].height == pytest.approx(12 / 20 * (HEIGHT - 2 * PAD))
