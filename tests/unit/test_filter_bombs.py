"""The bombs of issue 23 against content filters and transformers (decision 0060).

Each was minutes of one shared CPU, or an exception that stopped the fan-out, or an 81.9 MB
body; each must now answer in milliseconds: a match, a refusal naming the part, or a
recorded failure. A 5 s SIGALRM guards each test, so the old code fails them instead of
hanging the suite.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hookline.errors import BadRequest, EvaluationBudgetExceeded
from hookline.patterns import event_document, matches, validate_pattern
from hookline.transformers import TransformFailed, render, validate_transformer

pytestmark = pytest.mark.unit

FAST = 0.5  # seconds: what "milliseconds" allows on a loaded 2-core machine


@pytest.fixture(autouse=True)
def guard() -> Iterator[None]:
    def stop(signum: int, frame: Any) -> None:
        raise TimeoutError("still evaluating after 5 s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(5)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def doc(payload: bytes) -> dict[str, Any]:
    return event_document("t", "ten_1", "src_1", payload)


def timed(run: Any) -> tuple[Any, float]:
    began = time.perf_counter()
    result = run()
    return result, time.perf_counter() - began


@pytest.mark.parametrize("length", [80, 100])
def test_a_backtracking_wildcard_answers_at_once(length: int) -> None:
    # Given the stored pattern of the probe (saved before today's star limit)
    pattern = {"payload": {"s": [{"wildcard": "*a*a*a*a*a*a*b"}]}}
    event = doc(json.dumps({"s": "a" * length}).encode())
    # When one event of `length` a's is matched
    answer, took = timed(lambda: matches(pattern, event))
    # Then it does not match, at once (54 s for 100 a's before)
    assert answer is False
    assert took < FAST


def test_a_benign_wildcard_over_a_mib_body_is_linear() -> None:
    pattern = {"payload": {"log": [{"wildcard": "*error*timeout*"}]}}
    body = json.dumps({"log": "error " * (1024 * 1024 // 6)}).encode()
    answer, took = timed(lambda: matches(pattern, doc(body)))
    assert answer is False
    assert took < FAST
    hit = json.dumps({"log": "error " * 100_000 + "timeout"}).encode()
    assert matches(pattern, doc(hit)) is True


def test_hundreds_of_values_against_a_long_array_are_set_lookups() -> None:
    # Given an 836-number list (it fits EventBridge's 4,096 characters) and a 250 KB array
    pattern = validate_pattern({"payload": {"ids": list(range(836))}})
    body = json.dumps({"ids": list(range(10**6, 10**6 + 31_000))}).encode()
    assert len(body) > 250_000
    answer, took = timed(lambda: matches(pattern, doc(body)))
    assert answer is False
    assert took < FAST
    assert matches(pattern, doc(json.dumps({"ids": [*range(10**6, 10**6 + 30_000), 835]})))


def test_a_deep_body_is_absent_from_the_document_instead_of_raising() -> None:
    # Given a 6 KB body 3,000 levels deep (RecursionError in the fan-out before)
    deep = b"[" * 3000 + b"]" * 3000
    # When a filtered endpoint's pattern is matched against it
    event = doc(deep)
    # Then the payload is absent, as a non-JSON one, and says why
    assert "payload" not in event
    assert "deeper than 64 levels" in (event.unreadable or "")
    assert matches({"payload": [{"exists": False}]}, event) is True
    assert matches({"payload": {"x": [{"exists": True}]}}, event) is False
    # and a transformer reading it fails with that reason
    transformer = {"InputPathsMap": {"x": "$.payload[0]"}, "InputTemplate": "<x>"}
    with pytest.raises(TransformFailed, match="deeper than 64 levels"):
        render(transformer, event)


def test_a_body_just_within_the_publish_depth_is_read() -> None:
    body = json.dumps({"a": json.loads("[" * 60 + "1" + "]" * 60)}).encode()
    assert matches({"payload": {"a": [1]}}, doc(body)) is True


def test_an_event_over_its_budget_fails_closed_with_the_reason() -> None:
    # Given a pattern of many operators on a field, and an event whose array is long
    pattern = validate_pattern({"payload": {"s": [{"prefix": f"p{i}"} for i in range(200)]}})
    body = json.dumps({"s": ["x"] * 100_000}).encode()
    # When it is matched, the budget runs out long before the work would be done
    began = time.perf_counter()
    with pytest.raises(EvaluationBudgetExceeded, match="filter_max_steps"):
        matches(pattern, doc(body))
    # Then in milliseconds, and the error is a domain error callers record
    assert time.perf_counter() - began < FAST
    assert issubclass(EvaluationBudgetExceeded, BadRequest)


def test_one_budget_is_shared_by_every_filter_tried_on_an_event() -> None:
    pattern = {"payload": {"s": [{"prefix": f"p{i}"} for i in range(100)]}}
    event = doc(json.dumps({"s": ["x"] * 300}).encode())
    assert matches(pattern, event) is False  # 300 x (1 + 2 x 100) = 60,300 steps of 100,000
    with pytest.raises(EvaluationBudgetExceeded):
        matches(pattern, event)  # the same event, a second endpoint: over


def test_a_forty_star_wildcard_is_refused_at_save_naming_the_field() -> None:
    with pytest.raises(BadRequest, match=r"payload\.s: its wildcards hold 40 '\*'"):
        validate_pattern({"payload": {"s": [{"wildcard": "a*" * 40}]}})
    with pytest.raises(BadRequest, match="at most 6"):
        validate_pattern({"payload": {"s": [{"wildcard": "*x*"}] * 4}})
    assert validate_pattern({"payload": {"s": [{"wildcard": "*:stack/a/*"}] * 3}})


def test_a_deeply_nested_pattern_is_refused_without_recursing() -> None:
    pattern: dict[str, Any] = {"a": ["x"]}
    for _ in range(900):
        pattern = {"a": pattern}
    with pytest.raises(BadRequest, match="nests deeper than 32"):
        validate_pattern({"payload": pattern})


def test_an_amplifying_template_is_refused_at_save() -> None:
    with pytest.raises(BadRequest, match="2730 placeholders; at most 300"):
        validate_transformer({"InputPathsMap": {"a": "$.payload.a"}, "InputTemplate": "<a>" * 2730})


def test_an_amplifying_template_stops_while_rendering() -> None:
    # Given the probe's template (stored before the placeholder limit) and a 30 KB event
    transformer = {"InputPathsMap": {"a": "$.payload.a"}, "InputTemplate": "<a>" * 2730}
    event = doc(json.dumps({"a": "x" * 30_000}).encode())
    # When it renders, it stops at 4 x the payload instead of making 81.9 MB
    began = time.perf_counter()
    with pytest.raises(TransformFailed, match="would exceed 120036 bytes"):
        render(transformer, event)
    assert time.perf_counter() - began < FAST
    # and a caller's own limit (a destination kind's) applies instead when given
    small = {"InputPathsMap": {"a": "$.payload.a"}, "InputTemplate": "<a><a>"}
    with pytest.raises(TransformFailed, match="would exceed 50000 bytes"):
        render(small, event, max_rendered_bytes=50_000)
    assert len(render(small, event).body) == 60_000
