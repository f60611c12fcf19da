"""Schema patterns are judged by RE2, the engine that runs them, in every JSON Schema draft
(docs/decisions/0023): what RE2 cannot run is refused when the schema is saved."""

from __future__ import annotations

import pytest

from hookline.event_catalogue import SchemaViolation, check_schema

pytestmark = pytest.mark.unit

DRAFT_04 = "http://json-schema.org/draft-04/schema#"


def test_a_draft_04_pattern_properties_key_is_checked_although_its_metaschema_does_not():
    # Given a Draft 4 schema (no propertyNames, so its metaschema never looks at these keys)
    schema = {"$schema": DRAFT_04, "patternProperties": {"^(?!internal)": {"type": "string"}}}
    # When it is saved, then the lookahead is refused, naming the key
    with pytest.raises(SchemaViolation) as refused:
        check_schema(schema)
    assert 'schema.patternProperties["^(?!internal)"]' in str(refused.value)
    assert refused.value.errors[0]["rule"] == "pattern"


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("^INV\\Z", "invalid escape sequence: \\Z"),  # Python-only
        ("^(?<year>\\d{4})-\\k<year>$", "invalid escape sequence: \\k"),  # ECMA-262 backref
        ("^a{2000}$", "invalid repetition size: {2000}"),  # RE2 caps counted repeats at 1000
    ],
)
def test_syntax_re2_does_not_run_is_refused_with_its_reason(pattern, reason):
    with pytest.raises(SchemaViolation) as refused:
        check_schema({"properties": {"code": {"pattern": pattern}}})
    assert refused.value.errors[0]["path"] == "schema.properties.code.pattern"
    assert refused.value.errors[0]["message"] == reason


def test_re2_syntax_is_accepted_and_a_property_named_like_a_keyword_is_just_a_name():
    # Given \p{L} (ECMA-262 and RE2 have it, Python's re does not), and a property called
    # "unevaluatedProperties" beside patternProperties (only the keyword pair is refused)
    schema = {
        "properties": {"unevaluatedProperties": {"type": "string"}},
        "patternProperties": {"^\\p{L}+$": {"type": "integer"}},
    }
    # When it is saved, then it is accepted
    check_schema(schema)
