"""The failed-attempt bench (`bench/failed_attempts.py`) measures what it says: every message
of the delivered route is delivered, every one of the failed route fails and is retried (a
queued delivery of a new generation, its SQS message sent), one in ten of the third route's,
and each gets a figure."""

from __future__ import annotations

import re

import pytest

from tests.support import benches

pytestmark = pytest.mark.integration


def test_the_delivered_route_delivers_and_the_failed_route_fails_and_retries(
    pg_admin_url: str,
) -> None:
    done = benches.run_bench("failed_attempts.py", pg_admin_url, "--batches", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    # two timed batches and five warm-up ones, of ten messages each, per route
    assert (
        "{'delivered: delivered': 70, 'failed: queued': 70, 'one failed: delivered': 63,"
        " 'one failed: queued': 7}; retries sent: 77"
    ) in done.stdout
    figures = dict(
        re.findall(r"^(delivered|failed|one failed) +([\d,]+) ", done.stdout, re.MULTILINE)
    )
    assert set(figures) == {"delivered", "failed", "one failed"}
    assert all(int(value.replace(",", "")) > 0 for value in figures.values())
