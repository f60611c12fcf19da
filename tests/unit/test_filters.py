"""Event-type filters: which events an endpoint receives."""

from __future__ import annotations

import pytest

from hookline.errors import BadRequest
from hookline.filters import (
    matches,
    sql_like_patterns,
    to_sql_like,
    validate_filter,
    validate_filters,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("filters", "event_type", "expected"),
    [
        # no filters: everything
        ([], "invoice.paid", True),
        # the catch-all
        (["*"], "invoice.paid", True),
        (["*"], "ping", True),
        # exact names, case-sensitive
        (["invoice.paid"], "invoice.paid", True),
        (["invoice.paid"], "invoice.paid.late", False),
        (["invoice.paid"], "Invoice.paid", False),
        (["invoice.paid"], "invoice.payment_failed", False),
        # prefix wildcard: the family, at any depth, but not the bare prefix
        (["invoice.*"], "invoice.paid", True),
        (["invoice.*"], "invoice.line.added", True),
        (["invoice.*"], "invoice", False),
        (["invoice.*"], "invoiceitem.created", False),
        # suffix wildcard
        (["*.created"], "customer.created", True),
        (["*.created"], "customer.subscription.created", True),
        (["*.created"], "customer.updated", False),
        (["*.created"], "created", False),
        # wildcard in the middle
        (["customer.*.deleted"], "customer.source.deleted", True),
        (["customer.*.deleted"], "customer.deleted", False),
        # any of several filters
        (["invoice.paid", "charge.*"], "charge.refunded", True),
        (["invoice.paid", "charge.*"], "payout.paid", False),
        # '_' and other characters are literal, not LIKE wildcards
        (["pull_request"], "pullXrequest", False),
        (["pull_request"], "pull_request", True),
        (["orders/create"], "orders/create", True),
    ],
)
def test_an_endpoint_receives_exactly_the_events_its_filters_match(
    filters: list[str], event_type: str, expected: bool
) -> None:
    assert matches(filters, event_type) is expected


@pytest.mark.parametrize(
    "pattern",
    [
        "*",
        "invoice.paid",
        "invoice.*",
        "*.created",
        "a.*.c",
        "pull_request",
        "orders/create",
        "v1:thing-happened",
    ],
)
def test_valid_filters_are_accepted(pattern: str) -> None:
    assert validate_filter(pattern) == pattern


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("", "empty"),
        ("invoice..paid", "empty segment"),
        (".invoice", "empty segment"),
        ("invoice.", "empty segment"),
        ("inv*", "whole segment"),
        ("**", "whole segment"),
        ("*paid", "whole segment"),
        ("invoice paid", "may only contain"),
        ("invoice.%", "may only contain"),
        ("invoice\\paid", "may only contain"),
        ("a" * 256, "longer than"),
    ],
)
def test_invalid_filters_are_refused_with_the_reason(pattern: str, reason: str) -> None:
    with pytest.raises(BadRequest, match=reason):
        validate_filter(pattern)


def test_saving_filters_validates_each_and_drops_duplicates() -> None:
    assert validate_filters(["invoice.*", "charge.paid", "invoice.*"]) == [
        "invoice.*",
        "charge.paid",
    ]
    with pytest.raises(BadRequest):
        validate_filters(["invoice.*", "bad filter"])
    with pytest.raises(BadRequest):
        validate_filters("invoice.*")


@pytest.mark.parametrize(
    ("pattern", "like"),
    [
        ("*", "%"),
        ("invoice.paid", "invoice.paid"),
        ("invoice.*", "invoice.%"),
        ("*.created", "%.created"),
        ("customer.*.deleted", "customer.%.deleted"),
        ("pull_request.*", "pull\\_request.%"),
    ],
)
def test_filters_translate_to_postgres_like_patterns(pattern: str, like: str) -> None:
    assert to_sql_like(pattern) == like


def test_no_filters_become_one_pattern_that_matches_everything() -> None:
    # The fan-out query uses `event_type LIKE ANY(patterns)`; an empty array would match nothing.
    assert sql_like_patterns([]) == ["%"]
    assert sql_like_patterns(["a.*", "b.c", "a.*"]) == ["a.%", "b.c"]


def _like(pattern: str, text: str) -> bool:
    """A small LIKE evaluator with backslash escapes, as Postgres defines LIKE."""
    if not pattern:
        return not text
    head = pattern[0]
    if head == "\\":
        return bool(text) and text[0] == pattern[1] and _like(pattern[2:], text[1:])
    if head == "%":
        return any(_like(pattern[1:], text[i:]) for i in range(len(text) + 1))
    if head == "_":
        return bool(text) and _like(pattern[1:], text[1:])
    return bool(text) and text[0] == head and _like(pattern[1:], text[1:])


@pytest.mark.parametrize(
    "pattern", ["*", "invoice.*", "*.created", "customer.*.deleted", "pull_request", "a_b.*"]
)
@pytest.mark.parametrize(
    "event_type",
    [
        "invoice.paid",
        "invoice",
        "customer.created",
        "customer.source.deleted",
        "pull_request",
        "pullXrequest",
        "a_b.c",
        "aXb.c",
        "a_b",
        "",
    ],
)
def test_python_and_like_agree(pattern: str, event_type: str) -> None:
    # The fan-out matches in SQL, previews and tests in Python: they must never disagree.
    assert matches([pattern], event_type) == _like(to_sql_like(pattern), event_type)
