"""The bounds on schemas, payloads and the compiled-pattern cache (decision 0027), without
a database: each refusal names its limit, each check is iterative, and what is within the
limits passes as before."""

from __future__ import annotations

import pytest

from hookline.catalogue_limits import (
    CatalogueLimits,
    LimitExceeded,
    check_json_shape,
    screen_json_text,
)
from hookline.event_catalogue import SchemaViolation, check_schema
from hookline.schema_guards import ReferenceProblem, check_references
from hookline.schema_patterns import PatternCache

pytestmark = pytest.mark.unit


def shape(document, max_depth=64, digits=100):
    check_json_shape(
        document,
        root="payload",
        max_depth=max_depth,
        max_integer_digits=digits,
        depth_limit="payload_max_depth",
    )


def test_a_100000_deep_document_is_refused_without_recursing():
    # Given a document far deeper than Python's recursion limit
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    # When it is checked, then it is refused at the limit, naming it and the path
    with pytest.raises(LimitExceeded) as refused:
        shape(deep)
    assert refused.value.limit == "payload_max_depth"
    assert refused.value.where.startswith("payload[0][0]")


def test_integers_are_measured_without_converting_them_to_text():
    # 10**5000 cannot even be printed by default (Python's 4,300-digit limit)
    with pytest.raises(LimitExceeded) as refused:
        shape({"n": [1, 10**5000]})
    assert refused.value.limit == "max_integer_digits"
    assert refused.value.where == "payload.n[1]"
    # exactly at the limit passes; one digit more does not; booleans are not integers
    shape({"n": 10**100 - 1, "m": -(10**100 - 1), "t": True})
    with pytest.raises(LimitExceeded):
        shape({"n": 10**100})


def test_the_raw_body_screen_counts_brackets_and_digits_outside_strings():
    limits = CatalogueLimits(body_max_depth=5, max_integer_digits=10)
    # Brackets and digits inside strings (escaped quotes too) are text, not structure
    screen_json_text('{"a": "[[[[[[[[[[ 12345678901234 \\" [[[[[[", "b": [[1]]}', limits)
    with pytest.raises(LimitExceeded) as deep:
        screen_json_text('{"a": [[[[[[1]]]]]]}', limits)
    assert deep.value.limit == "body_max_depth"
    with pytest.raises(LimitExceeded) as digits:
        screen_json_text('{"a": 123456789012}', limits)
    assert digits.value.limit == "max_integer_digits"
    # an unbalanced body is left to the parser's own error
    screen_json_text("[[[", limits)


def test_a_schema_over_its_byte_size_is_refused():
    limits = CatalogueLimits(schema_max_bytes=200)
    with pytest.raises(SchemaViolation) as refused:
        check_schema({"description": "x" * 300}, limits)
    assert refused.value.errors[0]["rule"] == "schema_max_bytes"
    assert check_schema({"description": "x" * 100}, limits) < 200


def test_recursion_through_properties_is_allowed_and_in_place_loops_are_not():
    tree = {
        "$defs": {"node": {"properties": {"kids": {"items": {"$ref": "#/$defs/node"}}}}},
        "$ref": "#/$defs/node",
    }
    check_references(tree, 64)  # each step descends into the payload: it ends
    for looping in (
        {"$ref": "#"},
        {"not": {"$ref": "#"}},
        {"if": {"$ref": "#/$defs/a"}, "$defs": {"a": {"anyOf": [{"$ref": "#"}]}}},
        {"$defs": {"a": {"$anchor": "top", "oneOf": [{"$ref": "#top"}]}}, "$ref": "#top"},
    ):
        with pytest.raises(ReferenceProblem) as refused:
            check_references(looping, 64)
        assert refused.value.looped


def test_an_acyclic_chain_longer_than_allowed_is_refused():
    chain = {f"a{i}": {"$ref": f"#/$defs/a{i + 1}"} for i in range(10)}
    chain["a10"] = {"type": "string"}
    check_references({"$defs": chain}, 11)
    with pytest.raises(ReferenceProblem) as refused:
        check_references({"$defs": chain}, 5)
    assert not refused.value.looped


def test_the_pattern_cache_is_bounded_by_program_size_and_count():
    # Given a cache that keeps at most 3 patterns of 100 instructions together
    cache = PatternCache()
    cache.bound(3, 100)
    # When patterns of ~5 instructions and one of ~60 are used
    for i in range(5):
        cache.get(f"^a{i}$")
    assert cache.stats()[0] == 3
    cache.get("^x{50}$")
    cache.get("^y{50}$")
    # Then it holds no more than its bounds, oldest first out
    count, size = cache.stats()
    assert count <= 3 and size <= 100
    program, weight = cache.get("^y{50}$")
    assert program.search(b"y" * 50) is not None and weight >= 50


def test_a_unicode_class_weighs_its_threads_not_its_utf8_instructions():
    # \pL is ~1,200 UTF-8 instructions but one thread at a time: its weight is small, so
    # searching long names draws little from the validation budget
    program, weight = PatternCache().get("^\\pL+$")
    assert program.programsize > 1000
    assert weight < 20
