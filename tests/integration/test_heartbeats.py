"""Fan-out and reconcile count every run in a heartbeat metric, failed runs included: the
heartbeat alarm pages when runs stop, the Errors alarm when they fail (infra alarms)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hookline.db import reset_database
from hookline_dev.local.apigw import LocalContext

pytestmark = pytest.mark.integration


@pytest.fixture
def unreachable_database(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # Given a database nobody answers at (port 1 refuses at once)
    monkeypatch.setenv("DATABASE_URL", "postgresql://hookline@127.0.0.1:1/hookline")
    monkeypatch.setenv("HOOKLINE_DB_CONNECT_TIMEOUT", "1")
    reset_database()
    yield
    reset_database()


def emitted(out: str) -> set[str]:
    """Metric names of the EMF documents printed to stdout."""
    names: set[str] = set()
    for line in out.splitlines():
        if line.startswith("{") and "_aws" in line:
            document: dict[str, Any] = json.loads(line)
            for directive in document["_aws"]["CloudWatchMetrics"]:
                names |= {m["Name"] for m in directive["Metrics"]}
    return names


def _fanout() -> Callable[..., Any]:
    from functions.fanout.handler import lambda_handler

    return lambda_handler


def _reconcile() -> Callable[..., Any]:
    from functions.reconcile.handler import lambda_handler

    return lambda_handler


@pytest.mark.parametrize(
    ("handler", "name", "heartbeat"),
    [(_fanout, "fanout", "FanoutHeartbeat"), (_reconcile, "reconcile", "ReconcileHeartbeat")],
)
def test_a_failed_run_still_beats(
    unreachable_database: None,
    capsys: pytest.CaptureFixture[str],
    handler: Callable[[], Callable[..., Any]],
    name: str,
    heartbeat: str,
) -> None:
    # When a run fails (the database is unreachable)
    with pytest.raises(Exception):  # noqa: B017 - whichever error the driver raises
        handler()({"source": "test"}, LocalContext(function_name=name))
    # Then its heartbeat was still published
    assert heartbeat in emitted(capsys.readouterr().out)
