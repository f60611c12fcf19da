"""Ordering keys (decision 0069): which path is accepted when saved, and what key an event
gets, a missing or unreadable value included."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from hookline.errors import BadRequest
from hookline.ordering import MAX_KEY_CHARS, ordering_key, parse_ordering
from hookline.patterns import event_document

pytestmark = pytest.mark.unit

BY_CUSTOMER = {"key": "$.payload.customer.id"}


def doc(payload: Any) -> dict[str, Any]:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return event_document("order.paid", "ten_1", None, raw)


@pytest.mark.parametrize(
    ("payload", "key"),
    [
        ({"customer": {"id": "c-42"}}, "c-42"),
        ({"customer": {"id": 42}}, "42"),
        ({"customer": {"id": {"b": 1, "a": 2}}}, '{"a": 2, "b": 1}'),
        ({"customer": {}}, ""),  # no value: ordered with the others that have none
        (b"not json", ""),
    ],
)
def test_an_event_is_keyed_by_the_text_of_its_value_or_the_empty_key(
    payload: Any, key: str
) -> None:
    assert ordering_key(BY_CUSTOMER, doc(payload)) == key


def test_one_order_for_the_endpoint_and_long_values_hashed() -> None:
    assert ordering_key({"key": None}, doc({"customer": {"id": "x"}})) == ""
    long = ordering_key(BY_CUSTOMER, doc({"customer": {"id": "x" * 1000}}))
    assert long.startswith("sha256:") and len(long) <= MAX_KEY_CHARS


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ({"key": "payload.id"}, "ordering.key: 'payload.id' is not a JSON path"),
        ({"key": "$..id"}, "ordering.key:"),
        ({"key": 3}, "ordering.key: must be a JSON path"),
        ({"key": "$"}, "ordering.key: '$' is the whole event"),
        ({"key": "$.a", "extra": 1}, "ordering: must be"),
        ("$.payload.id", "ordering: must be"),
    ],
)
def test_a_bad_ordering_is_refused_naming_the_field(value: Any, says: str) -> None:
    with pytest.raises(BadRequest, match=re.escape(says)):
        parse_ordering(value)


def test_a_good_ordering_is_kept_as_given() -> None:
    assert parse_ordering(BY_CUSTOMER) == BY_CUSTOMER
    assert parse_ordering({"key": None}) == {"key": None}
    assert parse_ordering(None) is None
