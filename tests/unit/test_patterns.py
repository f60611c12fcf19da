"""Content filters: EventBridge event patterns over the event document.

The first cases are the examples of EventBridge's "Content filtering in event patterns" page,
moved under `payload` (our document has `type`, `tenant_id`, `source_id`, `payload`).
"""

from __future__ import annotations

from typing import Any

import pytest

from hookline.errors import BadRequest
from hookline.patterns import event_document, matches, parse_pattern, validate_pattern

pytestmark = pytest.mark.unit


def doc(payload: Any, event_type: str = "invoice.paid") -> dict[str, Any]:
    return event_document(event_type, "ten_1", "src_1", payload)


CASES = [
    # exact values, ANDed across fields, ORed within an array
    ({"type": ["invoice.paid"]}, {}, True),
    ({"type": ["invoice.failed", "invoice.paid"]}, {}, True),
    ({"type": ["invoice.paid"], "payload": {"state": ["running"]}}, {"state": "stopped"}, False),
    # prefix / suffix, with and without ignore-case (the docs' time, service and FileName)
    ({"payload": {"time": [{"prefix": "2017-10-02"}]}}, {"time": "2017-10-02T18:43:48Z"}, True),
    ({"payload": {"time": [{"prefix": "2017-10-02"}]}}, {"time": "2017-10-03T00:00:00Z"}, False),
    (
        {"payload": {"service": [{"prefix": {"equals-ignore-case": "EventB"}}]}},
        {"service": "eventbridge"},
        True,
    ),
    ({"payload": {"FileName": [{"suffix": ".png"}]}}, {"FileName": "image.png"}, True),
    ({"payload": {"FileName": [{"suffix": ".png"}]}}, {"FileName": "image.PNG"}, False),
    (
        {"payload": {"FileName": [{"suffix": {"equals-ignore-case": ".png"}}]}},
        {"FileName": "image.PNG"},
        True,
    ),
    # anything-but: a value, a number, lists, prefix, suffix, ignore-case, wildcard
    ({"payload": {"state": [{"anything-but": "initializing"}]}}, {"state": "running"}, True),
    ({"payload": {"state": [{"anything-but": "initializing"}]}}, {"state": "initializing"}, False),
    ({"payload": {"x-limit": [{"anything-but": 123}]}}, {"x-limit": 456}, True),
    ({"payload": {"x-limit": [{"anything-but": 123}]}}, {"x-limit": 123.0}, False),
    (
        {"payload": {"state": [{"anything-but": ["stopped", "overloaded"]}]}},
        {"state": "overloaded"},
        False,
    ),
    ({"payload": {"x-limit": [{"anything-but": [100, 200, 300]}]}}, {"x-limit": 150}, True),
    ({"payload": {"state": [{"anything-but": {"prefix": "init"}}]}}, {"state": "initial"}, False),
    (
        {"payload": {"FileName": [{"anything-but": {"suffix": ".txt"}}]}},
        {"FileName": "a.TXT"},
        True,
    ),
    (
        {
            "payload": {
                "state": [{"anything-but": {"equals-ignore-case": ["Stopped", "OverLoaded"]}}]
            }
        },
        {"state": "STOPPED"},
        False,
    ),
    (
        {"payload": {"FilePath": [{"anything-but": {"wildcard": "*/lib/*"}}]}},
        {"FilePath": "/usr/lib/x"},
        False,
    ),
    (
        {"payload": {"FilePath": [{"anything-but": {"wildcard": "*/lib/*"}}]}},
        {"FilePath": "/usr/bin/x"},
        True,
    ),
    # anything-but needs a value: a missing field does not match it
    ({"payload": {"state": [{"anything-but": "initializing"}]}}, {}, False),
    # numeric (the docs' c-count, d-count, x-limit)
    ({"payload": {"c-count": [{"numeric": [">", 0, "<=", 5]}]}}, {"c-count": 5}, True),
    ({"payload": {"c-count": [{"numeric": [">", 0, "<=", 5]}]}}, {"c-count": 0}, False),
    ({"payload": {"d-count": [{"numeric": ["<", 10]}]}}, {"d-count": 9.99}, True),
    ({"payload": {"x-limit": [{"numeric": ["=", 3.018e2]}]}}, {"x-limit": 301.8}, True),
    ({"payload": {"amount": [{"numeric": [">", 100]}]}}, {"amount": 100.5}, True),
    # numbers as strings never match numeric or a numeric value, nor the reverse
    ({"payload": {"amount": [{"numeric": [">", 100]}]}}, {"amount": "150"}, False),
    ({"payload": {"amount": [100]}}, {"amount": "100"}, False),
    ({"payload": {"amount": ["100"]}}, {"amount": 100}, False),
    ({"payload": {"flag": [True]}}, {"flag": 1}, False),
    ({"payload": {"amount": [{"numeric": [">", 0]}]}}, {"amount": True}, False),
    # exists, including on nested and missing objects
    ({"payload": {"c-count": [{"exists": True}]}}, {"c-count": 1}, True),
    ({"payload": {"c-count": [{"exists": False}]}}, {"c-count": 1}, False),
    ({"payload": {"c-count": [{"exists": False}]}}, {}, True),
    ({"payload": {"a": {"b": [{"exists": False}]}}}, {}, True),
    ({"payload": {"a": {"b": [{"exists": True}]}}}, {"a": "scalar"}, False),
    # exists only sees leaves: an object is not a leaf value
    ({"payload": {"a": [{"exists": True}]}}, {"a": {"b": 1}}, False),
    # null and the empty string are values
    ({"payload": {"LastName": [""]}}, {"LastName": ""}, True),
    ({"payload": {"UserID": [None]}}, {"UserID": None}, True),
    ({"payload": {"UserID": [None]}}, {}, False),
    # equals-ignore-case and unicode
    ({"payload": {"name": [{"equals-ignore-case": "alice"}]}}, {"name": "ALICE"}, True),
    ({"payload": {"city": [{"equals-ignore-case": "ÉCOLE"}]}}, {"city": "école"}, True),
    ({"payload": {"city": ["Zürich"]}}, {"city": "Zu\u0308rich"}, False),  # no normalisation
    ({"payload": {"emoji": [{"prefix": "🎉"}]}}, {"emoji": "🎉 launch"}, True),
    # wildcard, with escapes
    (
        {"payload": {"EventBusArn": [{"wildcard": "arn:aws:events:us-east-1:*:event-bus/*"}]}},
        {"EventBusArn": "arn:aws:events:us-east-1:123456789012:event-bus/default"},
        True,
    ),
    ({"payload": {"key": [{"wildcard": "dir/*.png"}]}}, {"key": "dir/a/b.png"}, True),
    ({"payload": {"key": [{"wildcard": "a\\*b"}]}}, {"key": "a*b"}, True),
    ({"payload": {"key": [{"wildcard": "a\\*b"}]}}, {"key": "axxb"}, False),
    # cidr, v4 and v6
    (
        {"payload": {"sourceIPAddress": [{"cidr": "10.0.0.0/24"}]}},
        {"sourceIPAddress": "10.0.0.255"},
        True,
    ),
    (
        {"payload": {"sourceIPAddress": [{"cidr": "10.0.0.0/24"}]}},
        {"sourceIPAddress": "10.0.1.1"},
        False,
    ),
    ({"payload": {"ip": [{"cidr": "2001:db8::/32"}]}}, {"ip": "2001:db8::1"}, True),
    ({"payload": {"ip": [{"cidr": "10.0.0.0/8"}]}}, {"ip": "not an ip"}, False),
    # $or at the top and nested (the docs' examples)
    (
        {
            "$or": [
                {"payload": {"c-count": [{"numeric": [">", 0, "<=", 5]}]}},
                {"payload": {"d-count": [{"numeric": ["<", 10]}]}},
            ]
        },
        {"d-count": 3},
        True,
    ),
    ({"payload": {"$or": [{"c-count": [1]}, {"d-count": [2]}]}}, {"c-count": 2}, False),
    ({"type": ["invoice.paid"], "$or": [{"source_id": ["src_1"]}, {"tenant_id": ["x"]}]}, {}, True),
    # arrays in the event: any element matches
    ({"payload": {"tags": ["red"]}}, {"tags": ["blue", "red"]}, True),
    ({"payload": {"tags": ["green"]}}, {"tags": ["blue", "red"]}, False),
    ({"payload": {"tags": ["red"]}}, {"tags": [["blue"], ["red"]]}, True),  # nested arrays
    ({"payload": {"tags": [{"anything-but": "red"}]}}, {"tags": ["red", "blue"]}, True),
    ({"payload": {"tags": [{"exists": False}]}}, {"tags": []}, True),
    # arrays of objects: one element must match every field of the nested pattern
    (
        {"payload": {"items": {"sku": ["A"], "qty": [2]}}},
        {"items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}]},
        False,
    ),
    (
        {"payload": {"items": {"sku": ["A"], "qty": [2]}}},
        {"items": [{"sku": "B", "qty": 1}, {"sku": "A", "qty": 2}]},
        True,
    ),
    # missing keys and missing objects
    ({"payload": {"customer": {"tier": ["gold"]}}}, {}, False),
    ({"payload": {"customer": {"tier": ["gold"]}}}, {"customer": {"tier": "gold"}}, True),
]


@pytest.mark.parametrize(("pattern", "payload", "expected"), CASES)
def test_an_event_matches_as_eventbridge_matches_it(
    pattern: dict[str, Any], payload: Any, expected: bool
) -> None:
    # Given a valid pattern, When an event with this payload arrives, Then
    assert matches(validate_pattern(pattern), doc(payload)) is expected


def test_no_pattern_matches_everything_and_a_non_json_payload_is_absent() -> None:
    assert matches(None, doc({}))
    text = event_document("t", "ten", None, b"not json")
    assert "payload" not in text
    assert matches({"payload": {"a": [{"exists": False}]}}, text)
    assert not matches({"payload": {"a": [{"anything-but": "x"}]}}, text)


@pytest.mark.parametrize(
    ("pattern", "complaint"),
    [
        ([], "must be a JSON object"),
        ({}, "(top): an empty pattern"),
        ({"detail": {"a": ["x"]}}, "detail: unknown field"),
        ({"payload": {"a": "x"}}, "payload.a: must be an array"),
        ({"payload": {"a": []}}, "payload.a: an empty array"),
        ({"payload": {"a": [{"prefix": 1}]}}, "payload.a[0]: prefix takes a string"),
        ({"payload": {"a": [{"prefix": "x", "suffix": "y"}]}}, "exactly one operator"),
        ({"payload": {"a": [{"contains": "x"}]}}, "payload.a[0]: unknown operator 'contains'"),
        ({"payload": {"a": [{"numeric": [">", "100"]}]}}, "numeric bound '100' is not a number"),
        ({"payload": {"a": [{"numeric": ["<", 5, ">", 1]}]}}, "lower bound"),
        ({"payload": {"a": [{"numeric": [">", 5, "<", 1]}]}}, "range is empty"),
        ({"payload": {"a": [{"numeric": ["~", 5]}]}}, "operator '~'"),
        ({"payload": {"a": [{"exists": "yes"}]}}, "exists takes true or false"),
        ({"payload": {"a": [{"cidr": "10.0.0.0/33"}]}}, "is not an IP network"),
        ({"payload": {"a": [{"wildcard": "a**b"}]}}, "consecutive"),
        ({"payload": {"a": [{"wildcard": "a\\b"}]}}, "escapes only"),
        ({"payload": {"a": [{"anything-but": ["x", 1]}]}}, "only strings or only numbers"),
        ({"payload": {"a": [{"anything-but": {"numeric": [">", 1]}}]}}, "does not take"),
        ({"$or": [{"type": ["x"]}]}, "$or: $or needs an array of at least two"),
        ({"$or": [{"type": ["x"]}, {"oops": ["y"]}]}, "$or[1].oops: unknown field"),
        ({"payload": {"a": [float("nan")]}}, "finite"),
        ({"payload": {"a": [{"equals-ignore-case": "x\ud800"}]}}, "without lone surrogates"),
        ({"payload": {"a": [{"wildcard": "he\\***o"}]}}, "consecutive"),
    ],
)
def test_a_bad_pattern_is_refused_naming_the_part(pattern: Any, complaint: str) -> None:
    with pytest.raises(BadRequest) as raised:
        validate_pattern(pattern)
    assert complaint in str(raised.value)
    assert str(raised.value).startswith("filter")


def test_the_cli_gives_json_text_and_bad_json_is_refused() -> None:
    assert parse_pattern('{"type": ["a"]}') == {"type": ["a"]}
    with pytest.raises(BadRequest, match="filter: not JSON"):
        parse_pattern("{type: a}")
    with pytest.raises(BadRequest, match="longer than"):
        parse_pattern({"payload": {"a": ["x" * 5000]}})


# Held-out conformance with EventBridge's reference engine (aws/event-ruler): payloads are
# given as JSON text, as the fan-out reads them, so numbers keep their text.
KELVIN = "\u212a"
CONFORMANCE = [
    # numbers: equal when both are exactly a double and equal, or when their texts are equal
    ({"payload": {"id": [1234567890123456789]}}, '{"id": 1234567890123456789}', True),
    ({"payload": {"id": [1234567890123456789]}}, '{"id": 1234567890123456788}', False),
    ({"payload": {"id": [1234567890123456789]}}, '{"id": [1, 1234567890123456790]}', False),
    ({"payload": {"id": [9007199254740993]}}, '{"id": 9007199254740992}', False),
    ({"payload": {"id": [9007199254740993]}}, '{"id": 9007199254740993.0}', False),
    ({"payload": {"n": [5]}}, '{"n": 5.0}', True),
    ({"payload": {"n": [0.1]}}, '{"n": 0.10}', True),
    ({"payload": {"n": [0.3]}}, '{"n": 0.30000000000000001}', False),
    ({"payload": {"n": [{"anything-but": [1234567890123456789]}]}}, '{"n": 1234567890123456788}', True),  # noqa: E501
    ({"payload": {"n": [{"numeric": [">", 0]}]}}, '{"n": 1234567890123456789}', False),
    ({"payload": {"n": [{"numeric": ["=", 0.1]}]}}, '{"n": 0.1000}', True),
    # an escaped star before a real star: "he*" then anything then "o"
    ({"payload": {"s": [{"wildcard": "he\\**o"}]}}, '{"s": "he*llo"}', True),
    ({"payload": {"s": [{"wildcard": "he\\**o"}]}}, '{"s": "hello"}', False),
    ({"payload": {"s": [{"wildcard": "*\\\\*"}]}}, '{"s": "a\\\\b"}', True),
    ({"payload": {"s": [{"wildcard": "ab*ba"}]}}, '{"s": "aba"}', False),
    ({"payload": {"s": [{"wildcard": "ab*ba"}]}}, '{"s": "abba"}', True),
    ({"payload": {"s": [{"wildcard": "*a*b*a*"}]}}, '{"s": "xxaxxbxxa"}', True),
    # exists: false under an empty array: the array holds no field at all
    ({"payload": {"a": {"b": [{"exists": False}]}}}, '{"a": []}', True),
    ({"payload": {"a": {"b": [{"exists": True}]}}}, '{"a": []}', False),
    ({"payload": {"a": {"b": [{"exists": False}]}}}, '{"a": [[]]}', True),
    ({"payload": {"a": {"b": ["x"]}}}, '{"a": []}', False),
    # ignore-case: each pattern character matches its own lower and upper case, nothing else
    ({"payload": {"u": [{"equals-ignore-case": "k"}]}}, f'{{"u": "{KELVIN}"}}', False),
    ({"payload": {"u": [{"equals-ignore-case": "k"}]}}, '{"u": "K"}', True),
    ({"payload": {"u": [{"equals-ignore-case": KELVIN}]}}, '{"u": "k"}', True),
    ({"payload": {"u": [{"equals-ignore-case": KELVIN}]}}, '{"u": "K"}', False),
    ({"payload": {"u": [{"equals-ignore-case": "straße"}]}}, '{"u": "STRASSE"}', True),
    ({"payload": {"u": [{"equals-ignore-case": "strasse"}]}}, '{"u": "straße"}', False),
    ({"payload": {"u": [{"prefix": {"equals-ignore-case": "ok"}}]}}, f'{{"u": "o{KELVIN}ay"}}', False),  # noqa: E501
    ({"payload": {"u": [{"prefix": {"equals-ignore-case": "ok"}}]}}, '{"u": "OKay"}', True),
    ({"payload": {"u": [{"suffix": {"equals-ignore-case": "k"}}]}}, f'{{"u": "mar{KELVIN}"}}', False),  # noqa: E501
    ({"payload": {"u": [{"suffix": {"equals-ignore-case": "ÉK"}}]}}, '{"u": "café\u00e9k"}', True),
    ({"payload": {"u": [{"anything-but": {"equals-ignore-case": "k"}}]}}, f'{{"u": "{KELVIN}"}}', True),  # noqa: E501
]  # fmt: skip


@pytest.mark.parametrize(("pattern", "payload", "expected"), CONFORMANCE)
def test_an_event_matches_exactly_where_eventbridge_matches_it(
    pattern: dict[str, Any], payload: str, expected: bool
) -> None:
    # Given a pattern EventBridge accepts, When an event with this JSON text arrives, Then
    assert matches(validate_pattern(pattern), doc(payload.encode())) is expected


def test_a_numeric_bound_that_is_not_exactly_a_double_is_refused_as_eventbridge_does() -> None:
    with pytest.raises(BadRequest, match="not exactly a double"):
        validate_pattern({"payload": {"n": [{"numeric": [">", 9007199254740993]}]}})
