"""Schema and payload bombs a tenant can send through the API (issue 12, decision 0027):
each is refused with a 4xx naming the limit, before the expensive work, and nothing is
stored; ordinary schemas and payloads still pass. Costs are asserted by counting (compiled
program sizes, comparisons, validation steps), not by the clock."""

from __future__ import annotations

import json

import jsonschema._utils
import pytest

from hookline import event_catalogue
from hookline.catalogue_limits import DEFAULT_LIMITS, LimitExceeded
from hookline.ingest import publish as publish_in_transaction
from hookline.schema_patterns import pattern_cache_stats
from hookline.settings import get_settings
from tests.support.management import as_tenant

pytestmark = pytest.mark.integration

# 441,551 RE2 instructions (~6 MB compiled) for the first; the issue's 30 took 5.6 s and
# kept +177 MB when saved before decision 0027
BOMBS = [f"(?:\\pL|\\pN){{{300 - i},329}}" for i in range(30)]


@pytest.fixture
def tenant_api(mgmt, db):
    """The API as a tenant (the attacker of issue 12), with cold caches."""
    event_catalogue.clear_cache()
    tenant = mgmt.post("/v1/tenants", {"name": "probe"}).json()
    yield as_tenant(mgmt, db, tenant["id"]), tenant["id"]
    event_catalogue.clear_cache()


def stored_events(db, tenant_id):
    with db.connection() as conn:
        row = conn.execute("SELECT count(*) AS n FROM events WHERE tenant_id = %s", (tenant_id,))
        return row.fetchone()["n"]


def stored_types(db, tenant_id):
    with db.connection() as conn:
        found = conn.execute(
            "SELECT count(*) AS n FROM event_types WHERE tenant_id = %s", (tenant_id,)
        )
        return found.fetchone()["n"]


def add_type(api, name, schema):
    return api.post("/v1/event-types", {"name": name, "schema": schema})


def publish(api, type, payload=None, raw=None):
    if raw is not None:
        return api.post("/v1/events", raw=raw.encode())
    return api.post("/v1/events", {"type": type, "payload": payload})


def test_thirty_exploding_patterns_are_refused_before_they_are_compiled(tenant_api, db):
    # Given the issue's body: 30 counted repetitions of a Unicode class, ~2 KB of JSON
    api, tenant_id = tenant_api
    props = {f"f{i}": {"type": "string", "pattern": p} for i, p in enumerate(BOMBS)}
    body = {"name": "probe.patterns", "schema": {"type": "object", "properties": props}}
    assert len(json.dumps(body)) < 2500
    # When it is saved
    refused = api.post("/v1/event-types", body)
    # Then it is a 422 naming the limit and the first pattern's path
    assert refused.status == 422, refused.body
    problem = refused.json()
    assert "pattern_max_program_size" in problem["detail"]
    assert problem["errors"][0]["path"] == "schema.properties.f0.pattern"
    assert problem["errors"][0]["rule"] == "pattern_max_program_size"
    # and no program was kept: the compile stopped at RE2's budget, nothing entered the cache
    assert pattern_cache_stats() == (0, 0)
    assert stored_types(db, tenant_id) == 0


def test_more_patterns_than_allowed_are_refused_naming_the_count(tenant_api):
    api, _ = tenant_api
    count = DEFAULT_LIMITS.schema_max_patterns + 1
    props = {f"f{i}": {"type": "string", "pattern": f"^x{i}$"} for i in range(count)}
    refused = add_type(api, "probe.many", {"type": "object", "properties": props})
    assert refused.status == 422, refused.body
    assert refused.json()["errors"][0]["rule"] == "schema_max_patterns"
    assert f"more than {count - 1} patterns" in refused.json()["detail"]


def test_a_ref_loop_is_refused_naming_where_it_loops(tenant_api, db):
    # Given two definitions that refer to each other without descending into the payload
    api, tenant_id = tenant_api
    schema = {
        "$ref": "#/$defs/a",
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
    }
    # When it is saved, then it is refused (it used to be stored, then every publish was a 502)
    refused = add_type(api, "probe.loop", schema)
    assert refused.status == 422, refused.body
    assert "$ref loop" in refused.json()["detail"]
    assert refused.json()["errors"][0]["rule"] == "$ref"
    assert refused.json()["errors"][0]["path"].startswith("schema.$defs.")
    assert stored_types(db, tenant_id) == 0


def test_a_300_level_schema_is_refused_naming_the_depth_limit_and_path(tenant_api):
    # Given a schema 300 subschemas deep (600 JSON levels; jsonschema's own check recursed
    # out of stack on it, a 502)
    api, _ = tenant_api
    deep: dict = {"type": "string"}
    for _ in range(90):  # 180 JSON levels: under the API's body limit, over the schema's
        deep = {"type": "object", "properties": {"x": deep}}
    # When it is saved, or patched onto an existing type
    created = add_type(api, "probe.deep", {"type": "object"})
    assert created.status == 201, created.body
    for refused in (
        add_type(api, "probe.deeper", deep),
        api.patch(f"/v1/event-types/{created.json()['id']}", {"schema": deep}),
    ):
        # Then each is a 422 naming the limit and where the schema got too deep
        assert refused.status == 422, refused.body
        assert refused.json()["errors"][0]["rule"] == "schema_max_depth"
        assert refused.json()["errors"][0]["path"].startswith("schema.properties.x.properties.x")
    # and one 300 subschemas deep (600 JSON levels) is refused before it is parsed at all
    for _ in range(210):
        deep = {"type": "object", "properties": {"x": deep}}
    refused = add_type(api, "probe.deepest", deep)
    assert refused.status == 400, refused.body
    assert "body_max_depth" in refused.json()["detail"]


def test_unique_items_over_3000_objects_is_checked_without_comparing_pairs(
    tenant_api, db, monkeypatch
):
    # Given a type whose payload is an array of unique items, and a count of the pairwise
    # comparisons jsonschema's own uniqueItems makes for objects it cannot sort
    api, tenant_id = tenant_api
    assert add_type(api, "probe.unique", {"type": "array", "uniqueItems": True}).status == 201
    compared = []
    real_equal = jsonschema._utils.equal
    monkeypatch.setattr(
        jsonschema._utils, "equal", lambda a, b: compared.append(1) or real_equal(a, b)
    )
    items = [{"n": i} for i in range(3000)]
    # When 3,000 distinct objects are published, and then the same with one repeated
    accepted = publish(api, "probe.unique", items)
    refused = publish(api, "probe.unique", [*items, {"n": 1500}])
    # Then the first is stored and the second refused, without pairwise comparisons (the
    # old check made ~9 million for each: 11 s of CPU in the issue)
    assert accepted.status == 200, accepted.body
    assert refused.status == 422, refused.body
    assert refused.json()["errors"][0]["rule"] == "uniqueItems"
    assert compared == []
    assert stored_events(db, tenant_id) == 1


def test_unique_items_keeps_json_equality(tenant_api):
    api, _ = tenant_api
    assert add_type(api, "probe.same", {"type": "array", "uniqueItems": True}).status == 201
    # 1 and 1.0 are the same number, objects equal whatever their key order; true is not 1
    assert publish(api, "probe.same", [1, 1.0]).status == 422
    assert publish(api, "probe.same", [{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}]).status == 422
    assert publish(api, "probe.same", [True, 1, False, 0, None, "1", [1], {"1": 1}]).status == 200


def test_a_schema_whose_validation_multiplies_is_stopped_by_the_step_budget(tenant_api, db):
    # Given references that double the work at each level (anyOf of two branches, both
    # failing at the leaf), acyclic and small: 2^20 evaluations on a 20-deep payload
    api, tenant_id = tenant_api
    defs = {f"l{i}": {"anyOf": [{"items": {"$ref": f"#/$defs/l{i + 1}"}}] * 2} for i in range(20)}
    defs["l20"] = {"type": "string"}
    assert add_type(api, "probe.doubling", {"$ref": "#/$defs/l0", "$defs": defs}).status == 201
    payload: list = [1]
    for _ in range(20):
        payload = [payload]
    # When it is published
    refused = publish(api, "probe.doubling", payload)
    # Then validation stops at the budget: a 422 naming it, nothing stored
    assert refused.status == 422, refused.body
    assert "validation_max_steps" in refused.json()["detail"]
    assert stored_events(db, tenant_id) == 0


def test_a_5000_digit_integer_is_refused_naming_the_limit(tenant_api, db):
    # Python refuses to parse more than 4,300 digits (ValueError, a 502); fewer cost
    # quadratic time to convert
    api, tenant_id = tenant_api
    digits = "9" * 5000
    refused = publish(api, "", raw=f'{{"type": "order.created", "payload": {{"n": {digits}}}}}')
    assert refused.status == 400, refused.body
    assert "max_integer_digits" in refused.json()["detail"]
    # and through hookline.publish in a producer's transaction, with the path
    with db.connection() as conn, pytest.raises(LimitExceeded) as over:
        publish_in_transaction(
            conn,
            tenant_id=tenant_id,
            type="order.created",
            payload={"n": [10**5000 - 1]},
            settings=get_settings(),
        )
    assert "payload.n[0]" in str(over.value) and "max_integer_digits" in str(over.value)
    assert stored_events(db, tenant_id) == 0


def test_100000_deep_nesting_is_refused_naming_the_limit(tenant_api, db):
    api, tenant_id = tenant_api
    nested = "[" * 100_000 + "]" * 100_000
    refused = publish(api, "", raw=f'{{"type": "order.created", "payload": {nested}}}')
    assert refused.status == 400, refused.body
    assert "body_max_depth" in refused.json()["detail"]
    # and a payload deeper than a payload may be, but parseable, names the limit and path
    deep = "[" * 100 + "]" * 100
    too_deep = publish(api, "", raw=f'{{"type": "order.created", "payload": {deep}}}')
    assert too_deep.status == 400, too_deep.body
    assert "payload_max_depth" in too_deep.json()["detail"]
    assert "payload[0][0]" in too_deep.json()["detail"]
    assert stored_events(db, tenant_id) == 0


def test_a_payload_over_the_size_limit_is_413(tenant_api, db):
    api, tenant_id = tenant_api
    big = {"blob": "x" * (DEFAULT_LIMITS.payload_max_bytes + 1)}
    refused = publish(api, "order.created", big)
    assert refused.status == 413, refused.body
    assert "payload_max_bytes" in refused.json()["detail"]
    assert stored_events(db, tenant_id) == 0


def test_ordinary_schemas_and_payloads_still_pass(tenant_api, db):
    # Given a schema with the usual things: patterns (Unicode too), recursion through
    # properties (a tree), definitions, uniqueItems, enum
    api, tenant_id = tenant_api
    schema = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "pattern": "^\\pL[\\pL ]{0,15}$"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
            }
        },
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{3}-\\d{4}$"},
            "tags": {"type": "array", "uniqueItems": True, "items": {"enum": ["a", "b", "c"]}},
            "tree": {"$ref": "#/$defs/node"},
            "amount": {"type": "integer"},
        },
        "patternProperties": {"^x-": {"type": "string"}},
        "additionalProperties": False,
    }
    assert add_type(api, "invoice.sent", schema).status == 201
    tree: dict = {"name": "Zoë"}
    for depth in range(20):
        tree = {"name": f"level {'é' * (depth % 5)}", "children": [tree]}
    payload = {
        "code": "INV-0042",
        "tags": ["a", "c"],
        "tree": tree,
        "x-trace": "t",
        "amount": 10**30,
    }
    # When a matching payload and a breaking one are published
    accepted = publish(api, "invoice.sent", payload)
    refused = publish(api, "invoice.sent", {**payload, "code": "inv-42"})
    # Then the first is stored and the second refused for its pattern, as before
    assert accepted.status == 200, accepted.body
    assert refused.status == 422 and refused.json()["errors"][0]["rule"] == "pattern"
    assert stored_events(db, tenant_id) == 1


@pytest.fixture
def tight_limits(monkeypatch):
    """The API with limits set through its environment, as a deployment would."""
    from hookline.settings import get_settings

    monkeypatch.setenv("HOOKLINE_SCHEMA_MAX_PATTERNS", "1")
    monkeypatch.setenv("HOOKLINE_PAYLOAD_MAX_BYTES", "50")
    get_settings.cache_clear()
    yield
    monkeypatch.undo()
    get_settings.cache_clear()


def test_limits_set_in_the_environment_are_the_ones_the_api_applies(tenant_api, tight_limits):
    api, _ = tenant_api
    two = {"properties": {"a": {"pattern": "^a$"}, "b": {"pattern": "^b$"}}}
    refused = add_type(api, "probe.two", two)
    assert refused.status == 422 and "more than 1 patterns" in refused.json()["detail"]
    assert add_type(api, "probe.one", {"properties": {"a": {"pattern": "^a$"}}}).status == 201
    too_big = publish(api, "order.created", {"text": "x" * 60})
    assert too_big.status == 413 and "over the limit of 50" in too_big.json()["detail"]
