"""Input transformers: what an endpoint receives, rendered as EventBridge renders it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hookline.errors import BadRequest
from hookline.patterns import event_document
from hookline.transformers import (
    TransformFailed,
    parse_transformer,
    render,
    validate_transformer,
)

pytestmark = pytest.mark.unit

EVENT = event_document(
    "instance.state",
    "ten_1",
    "src_1",
    {"instance": "i-0123456789", "state": "RUNNING", "count": 3,
     "tags": ["a", "b"], "owner": {"name": "Zoë \"Z\""}},
)  # fmt: skip
PATHS = {
    "instance": "$.payload.instance",
    "state": "$.payload.state",
    "count": "$.payload.count",
    "owner": "$.payload.owner",
    "second": "$.payload.tags[1]",
    "type": "$.type",
}


def rendered(template: str, paths: dict[str, str] | None = None) -> tuple[str, str]:
    transformer = validate_transformer(
        {"InputPathsMap": PATHS if paths is None else paths, "InputTemplate": template}
    )
    out = render(transformer, EVENT)
    return out.body.decode(), out.content_type


def test_a_string_template_is_a_json_string_with_the_values_inside() -> None:
    # The documentation's "<instance> is in state <status>", as the whole template string
    body, content_type = rendered('"<instance> is in state <state>"')
    assert body == '"i-0123456789 is in state RUNNING"'
    assert json.loads(body) == "i-0123456789 is in state RUNNING"
    assert content_type == "application/json"


def test_a_json_template_quotes_values_outside_strings_and_escapes_them_inside() -> None:
    # The documentation's example: variables in quotes or out
    body, _ = rendered(
        '{"myInstance": <instance>, "myStatus": "<instance> is in state \\"<state>\\"",'
        ' "n": <count>, "owner": <owner>, "who": "by <owner>", "tag": <second>, "t": <type>}'
    )
    assert json.loads(body) == {
        "myInstance": "i-0123456789",
        "myStatus": 'i-0123456789 is in state "RUNNING"',
        "n": 3,
        "owner": {"name": 'Zoë "Z"'},
        "who": 'by {"name": "Zoë \\"Z\\""}',
        "tag": "b",
        "t": "instance.state",
    }


def test_a_text_template_inserts_the_values_as_text() -> None:
    body, content_type = rendered("Instance <instance> is <state> (<count>)")
    assert body == "Instance i-0123456789 is RUNNING (3)"
    assert content_type.startswith("text/plain")


def test_the_whole_event_can_be_a_value() -> None:
    body, _ = rendered('{"event": <aws.events.event.json>}', paths={})
    assert json.loads(body)["event"] == EVENT


def test_a_path_not_in_the_event_fails_with_the_reason() -> None:
    transformer = validate_transformer(
        {"InputPathsMap": {"x": "$.payload.missing.deep"}, "InputTemplate": '{"x": <x>}'}
    )
    with pytest.raises(TransformFailed, match=r"\$.payload.missing.deep \(<x>\) is not in"):
        render(transformer, EVENT)
    with pytest.raises(TransformFailed, match="not in the event"):
        render({"InputPathsMap": {"x": "$.payload.tags[7]"}, "InputTemplate": "<x>"}, EVENT)


@pytest.mark.parametrize(
    ("transformer", "complaint"),
    [
        ([], "must be an object"),
        ({"InputTemplate": "x", "Other": 1}, "must be an object"),
        ({"InputPathsMap": {"a": "payload.a"}, "InputTemplate": "<a>"}, "must start with '$'"),
        ({"InputPathsMap": {"a": "$.payload[*]"}, "InputTemplate": "<a>"}, "only dot names"),
        ({"InputPathsMap": {"a b": "$.type"}, "InputTemplate": "x"}, "InputPathsMap.a b: names"),
        ({"InputPathsMap": {"awsX": "$.type"}, "InputTemplate": "x"}, "may not start with 'aws'"),
        ({"InputPathsMap": {}, "InputTemplate": "<amount>"}, "<amount> is not defined"),
        (
            {"InputPathsMap": {"k": "$.type"}, "InputTemplate": "{<k>: 1}"},
            "cannot be an object key",
        ),
        ({"InputPathsMap": {"k": "$.type"}, "InputTemplate": '{"a": <k>,}'}, "not valid JSON"),
        ({"InputPathsMap": {}, "InputTemplate": ""}, "InputTemplate: a string of 1"),
        ({"InputTemplate": '"<aws.events.event.json>"'}, "may only stand as a JSON value"),
    ],
)
def test_a_bad_transformer_is_refused_naming_the_part(transformer: Any, complaint: str) -> None:
    with pytest.raises(BadRequest) as raised:
        validate_transformer(transformer)
    assert complaint in str(raised.value)
    assert str(raised.value).startswith("transform")


def test_the_cli_gives_json_text() -> None:
    assert parse_transformer('{"InputTemplate": "hi"}') == {"InputTemplate": "hi"}
    with pytest.raises(BadRequest, match="transform: not JSON"):
        parse_transformer("{nope")
