"""Replay requests: what is accepted, what is refused and how the refusal reads; the pacer;
and the CLI's path through the replay function."""

from __future__ import annotations

import io
import json
import re
import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hookline.errors import BadRequest, HooklineError
from hookline.replay import Pacer, parse_request
from hookline.restore_requests import parse_restore
from hookline_dev.cli import build_parser
from hookline_dev.commands.replay import invoke_function, request_document

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
GROUPS = ("standard", "priority", "bulk")
WHO = {"requested_by": "ana@example.com", "reason": "endpoint outage"}


def parse(**doc: Any):
    return parse_request({**WHO, **doc}, groups=GROUPS, now=NOW)


def test_each_selector_is_recognised_with_its_defaults():
    assert parse(delivery_ids=["dlv_1", "dlv_1", "dlv_2"]).delivery_ids == ("dlv_1", "dlv_2")
    by_events = parse(event_ids=["evt_1"])
    assert by_events.selector == "event_ids" and "delivered" in by_events.states
    by_endpoint = parse(endpoint_id="ep_1", since="2h")
    assert by_endpoint.selector == "endpoint" and by_endpoint.states == ("failed", "dead")
    assert by_endpoint.window is not None
    assert by_endpoint.window.since == NOW - timedelta(hours=2) and by_endpoint.window.until == NOW
    window = parse(tenant_id="ten_1", event_type="invoice.*", since="2024-05-01T00:00:00",
                   until="2024-05-01T06:00:00+00:00", states=["dead"])  # fmt: skip
    assert window.selector == "window" and window.window is not None
    assert window.window.tenant_id == "ten_1" and window.window.types == ("invoice.*",)
    assert window.window.since == datetime(2024, 5, 1, tzinfo=UTC)  # no offset: UTC
    assert window.states == ("dead",)
    refanout = parse(since="1d", refanout=True, max_per_second=5, dry_run=True)
    assert refanout.refanout and refanout.dry_run and refanout.max_per_second == 5.0
    assert parse(redrive_dlq="bulk").redrive_group == "bulk"


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"delivery_ids": ["d"], "requested_by": "ana"}, "reason missing"),
        ({"delivery_ids": ["d"], "reason": "x"}, "requested_by missing"),
        ({"delivery_ids": ["d"], "requested_by": " ", "reason": ""}, "requested_by and reason"),
    ],
)
def test_who_and_why_are_required(doc, message):
    with pytest.raises(BadRequest, match=message) as refused:
        parse_request(doc, groups=GROUPS, now=NOW)
    assert "audit" in str(refused.value)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({}, "say what to replay"),
        ({"delivery_id": "d"}, "unknown field.*delivery_id"),
        ({"delivery_ids": ["d"], "event_ids": ["e"]}, "cannot be combined with event_ids"),
        ({"delivery_ids": ["d"], "states": ["failed"]}, "cannot be combined with states"),
        ({"redrive_dlq": "standard", "since": "1h"}, "cannot be combined with since"),
        ({"endpoint_id": "ep", "tenant_id": "t", "since": "1h"}, "cannot be combined"),
        ({"endpoint_id": "ep"}, "needs a window: since"),
        ({"tenant_id": "t"}, "needs a window: since"),
        ({"since": "2h", "until": "3h"}, "bad window: since .* must be before until"),
        ({"since": "2999-01-01T00:00:00Z", "until": "3000-01-01T00:00:00Z"}, "in the future"),
        ({"since": "yesterday"}, "is not a time"),
        ({"since": "1h", "states": ["lost"]}, "unknown state"),
        ({"since": "1h", "states": []}, "states must be"),
        ({"since": "1h", "refanout": True, "states": ["failed"]}, "takes no states"),
        ({"since": "1h", "refanout": "yes"}, "refanout must be true or false"),
        ({"redrive_dlq": "gold"}, "unknown tenant group 'gold'; known: standard"),
        ({"delivery_ids": []}, "non-empty list"),
        ({"delivery_ids": ["d"], "max_per_second": 0}, "positive number"),
        ({"delivery_ids": ["d"], "limit": 0}, "limit must be"),
        ({"delivery_ids": ["a", "b"], "limit": 1}, "more than the limit"),
    ],
)
def test_bad_requests_are_refused_with_a_clear_message(doc, message):
    with pytest.raises(BadRequest, match=message):
        parse(**doc)


def test_a_request_that_is_not_an_object_is_refused():
    with pytest.raises(BadRequest, match="JSON object"):
        parse_request(["dlv_1"], groups=GROUPS, now=NOW)


def test_the_pacer_spaces_sends_evenly():
    clock = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    pacer = Pacer(4, sleep=sleep, monotonic=lambda: clock[0])
    assert pacer.batch(100) == 1
    sent_at = []
    for _ in range(5):
        pacer.wait()
        sent_at.append(clock[0])
        pacer.done(1)
    assert sent_at == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert Pacer(100).batch(100) == 20 and Pacer(None).batch(100) == 100


class FakeLambda:
    def __init__(self, answer: Any, function_error: bool = False) -> None:
        self.answer = answer
        self.function_error = function_error
        self.calls: list[dict[str, Any]] = []

    def invoke(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        reply: dict[str, Any] = {"Payload": io.BytesIO(json.dumps(self.answer).encode())}
        if self.function_error:
            reply["FunctionError"] = "Unhandled"
        return reply


def test_the_cli_can_run_a_replay_in_the_function():
    fake = FakeLambda({"ok": True, "selected": 1, "enqueued": 1})
    assert invoke_function(fake, "hookline-replay", {"delivery_ids": ["d"], **WHO}) == {
        "selected": 1, "enqueued": 1,
    }  # fmt: skip
    [call] = fake.calls
    assert call["FunctionName"] == "hookline-replay"
    assert json.loads(call["Payload"]) == {"delivery_ids": ["d"], **WHO}
    refused = FakeLambda({"ok": False, "error": {"type": "bad_request", "message": "no"}})
    with pytest.raises(HooklineError, match="no"):
        invoke_function(refused, "f", {})
    with pytest.raises(HooklineError, match="the replay function failed: boom"):
        invoke_function(FakeLambda({"errorMessage": "boom"}, function_error=True), "f", {})


def _runbook() -> str:
    return (Path(__file__).parents[2] / "docs" / "operations.md").read_text()


def test_every_console_event_in_the_runbook_is_a_valid_request():
    blocks = re.findall(r"```json\n(.*?)```", _runbook(), re.DOTALL)
    events = [json.loads(b) for b in blocks if '"requested_by"' in b]
    replays = [e for e in events if "restore" not in e]
    restores = [e["restore"] for e in events if "restore" in e]
    assert len(replays) >= 7 and restores
    selectors = {parse_request(e, groups=GROUPS, now=NOW).selector for e in replays}
    assert selectors == {"delivery_ids", "event_ids", "endpoint", "window", "redrive_dlq"}
    # The replay function's other event, a restore from the archive, is valid too
    for doc in restores:
        assert parse_restore(doc, now=NOW).reason


def test_every_cli_line_in_the_runbook_makes_a_valid_request():
    lines = re.findall(r"^hookline replay (?:.*\\\n)*.*$", _runbook(), re.MULTILINE)
    assert len(lines) >= 7
    for line in lines:
        argv = shlex.split(line.replace("\\\n", " "))[1:]
        args = build_parser().parse_args(argv)
        request = parse_request(request_document(args), groups=GROUPS, now=NOW)
        assert request.requested_by == "ana@example.com"
