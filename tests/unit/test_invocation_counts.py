"""The receiver's per-invocation counts print the EMF document Powertools would (0077)."""

from __future__ import annotations

import json

import pytest
from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

from hookline.observability import NAMESPACE, SERVICE, InvocationCounts

pytestmark = pytest.mark.unit


def powertools_document(counts: list[tuple[str, int]], capsys: pytest.CaptureFixture[str]) -> dict:
    """What Powertools prints for these `add_metric(..., Count, ...)` calls and a flush."""
    emf = EphemeralMetrics(namespace=NAMESPACE, service=SERVICE)
    for name, value in counts:
        emf.add_metric(name=name, unit=MetricUnit.Count, value=value)
    emf.flush_metrics()
    document: dict = json.loads(capsys.readouterr().out)
    return document


def test_counts_print_the_document_powertools_prints(capsys: pytest.CaptureFixture[str]) -> None:
    # Given an accepted event's counts, one name added twice as a fan-out of two would
    counts = [("EventsAccepted", 1), ("DeliveriesFannedOut", 2), ("DeliveriesEnqueued", 2),
              ("EventsAccepted", 1)]  # fmt: skip
    expected = powertools_document(counts, capsys)
    invocation = InvocationCounts()
    for name, value in counts:
        invocation.count(name, value)
    # When the invocation flushes them
    invocation.flush()
    out = capsys.readouterr().out
    # Then one line is printed, the same EMF document but for its timestamp
    assert out.count("\n") == 1
    printed = json.loads(out)
    for document in (printed, expected):
        assert isinstance(document["_aws"].pop("Timestamp"), int)
    assert printed == expected
    # And a second flush prints nothing: the counts were forgotten
    invocation.flush()
    assert capsys.readouterr().out == ""


def test_nothing_is_printed_without_counts_or_when_metrics_are_disabled(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an invocation that counted nothing (a rejected request counts on its own line)
    InvocationCounts().flush()
    # Then it prints no line
    assert capsys.readouterr().out == ""
    # And with metrics disabled as Powertools reads it, counts print nothing either
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    disabled = InvocationCounts()
    disabled.count("EventsAccepted")
    disabled.flush()
    assert capsys.readouterr().out == ""
