"""The event-type catalogue: CRUD and paging through the API, tenant isolation, schemas that
must be JSON Schemas, and published payloads validated against them (through the API and
through `hookline.ingest.publish` in the caller's transaction) — a refused payload stores
nothing; a type outside the catalogue, or archived, publishes as before."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from hookline.errors import BadRequest
from hookline.event_catalogue import SchemaViolation
from hookline.ingest import publish
from hookline.repositories import audit as audit_repo
from hookline.settings import get_settings
from tests.support.management import as_tenant

pytestmark = pytest.mark.integration

INVOICE_SCHEMA = {
    "type": "object",
    "properties": {
        "amount": {"type": "integer", "minimum": 0},
        "currency": {"type": "string", "enum": ["EUR", "USD"]},
        "lines": {"type": "array", "items": {"type": "object", "required": ["sku"]}},
    },
    "required": ["amount", "currency"],
}


def make_tenant(mgmt, name="acme"):
    result = mgmt.post("/v1/tenants", {"name": name})
    assert result.status == 201, result.body
    return result.json()


def add_type(client, tenant_id=None, name="invoice.paid", schema=INVOICE_SCHEMA, **fields):
    body = {"name": name, "description": "An invoice was paid", **fields}
    if tenant_id is not None:
        body["tenant_id"] = tenant_id
    if schema is not None:
        body["schema"] = schema
    result = client.post("/v1/event-types", body)
    assert result.status == 201, result.body
    return result.json()


@contextmanager
def completes_within(seconds: float) -> Iterator[None]:
    """Fail the block if it runs longer than `seconds`. A backtracking regex holds the GIL,
    so a watchdog thread could not even wake: SIGALRM interrupts it (`re` checks signals)."""

    class Stalled(Exception):
        pass

    def stalled(*_):
        raise Stalled(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stalled)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def events_of(db, tenant_id):
    with db.connection() as conn:
        return conn.execute("SELECT type FROM events WHERE tenant_id = %s", (tenant_id,)).fetchall()


def test_an_operator_adds_reads_updates_and_archives_an_event_type(mgmt, db):
    # Given a tenant
    tenant = make_tenant(mgmt)
    # When an operator adds a type with a schema
    created = add_type(mgmt, tenant["id"])
    # Then it is live, with its schema, and readable by id
    assert created["id"].startswith("ety_")
    assert (created["tenant_id"], created["name"], created["archived"]) == (
        tenant["id"],
        "invoice.paid",
        False,
    )
    assert created["schema"] == INVOICE_SCHEMA
    assert mgmt.get(f"/v1/event-types/{created['id']}").json() == created

    # When its description changes (the schema stays), then its schema is removed
    described = mgmt.patch(f"/v1/event-types/{created['id']}", {"description": "Paid in full"})
    assert described.status == 200, described.body
    assert described.json()["description"] == "Paid in full"
    assert described.json()["schema"] == INVOICE_SCHEMA
    assert described.json()["updated_at"] > created["updated_at"]
    cleared = mgmt.patch(f"/v1/event-types/{created['id']}", {"schema": None}).json()
    assert cleared["schema"] is None and cleared["description"] == "Paid in full"

    # When it is archived
    archived = mgmt.request("DELETE", f"/v1/event-types/{created['id']}")
    assert archived.status == 200, archived.body
    assert archived.json()["archived"] is True and archived.json()["archived_at"]
    # Then it leaves the list (unless asked), stays readable, and cannot be changed
    assert mgmt.get("/v1/event-types").json()["items"] == []
    assert [t["id"] for t in mgmt.get("/v1/event-types", archived="true").json()["items"]] == [
        created["id"]
    ]
    refused = mgmt.patch(f"/v1/event-types/{created['id']}", {"description": "x"})
    assert refused.status == 409 and "archived" in refused.json()["detail"]
    # and its name is free for a new definition
    again = add_type(mgmt, tenant["id"])
    assert again["id"] != created["id"]
    with db.connection() as conn:
        actions = [
            (e["action"], e["object_type"])
            for e in audit_repo.list_audit_entries(conn)
            if e["object_type"] == "event_type"
        ]
    assert {("create", "event_type"), ("update", "event_type"), ("archive", "event_type")} <= set(
        actions
    )


def test_event_types_page_newest_first_and_filter_by_tenant_and_name(mgmt):
    acme, other = make_tenant(mgmt, "acme"), make_tenant(mgmt, "other")
    names = [f"order.step{i}" for i in range(5)]
    ids = [add_type(mgmt, acme["id"], name=n, schema=None)["id"] for n in names]
    add_type(mgmt, other["id"], name="order.step0", schema=None)

    first = mgmt.get("/v1/event-types", tenant_id=acme["id"], limit=2).json()
    second = mgmt.get(
        "/v1/event-types", tenant_id=acme["id"], limit=2, cursor=first["next_cursor"]
    ).json()
    third = mgmt.get(
        "/v1/event-types", tenant_id=acme["id"], limit=2, cursor=second["next_cursor"]
    ).json()
    seen = [t["id"] for page in (first, second, third) for t in page["items"]]
    assert seen == list(reversed(ids)) and third["next_cursor"] is None
    by_name = mgmt.get("/v1/event-types", name="order.step0").json()["items"]
    assert {t["tenant_id"] for t in by_name} == {acme["id"], other["id"]}


def test_a_tenant_sees_and_changes_only_its_own_types(mgmt, db):
    # Given two tenants, each with a type, and a caller scoped to tenant A
    a, b = make_tenant(mgmt, "a"), make_tenant(mgmt, "b")
    caller_a = as_tenant(mgmt, db, a["id"])
    own = add_type(caller_a)  # a tenant caller may omit tenant_id
    theirs = add_type(mgmt, b["id"])
    assert own["tenant_id"] == a["id"]

    # Then B's type is not found for A — read, change or archive — exactly like a missing one
    for result in (
        caller_a.get(f"/v1/event-types/{theirs['id']}"),
        caller_a.patch(f"/v1/event-types/{theirs['id']}", {"description": "mine now"}),
        caller_a.request("DELETE", f"/v1/event-types/{theirs['id']}"),
        caller_a.get("/v1/event-types/ety_doesnotexist"),
    ):
        assert result.status == 404, result.body
        assert result.json()["detail"].startswith("no event type")
    # and A lists only its own, even when it asks for B's
    assert [t["id"] for t in caller_a.get("/v1/event-types").json()["items"]] == [own["id"]]
    assert caller_a.get("/v1/event-types", tenant_id=b["id"]).json()["items"] == []
    # and cannot create one in B
    refused = caller_a.post(
        "/v1/event-types", {"tenant_id": b["id"], "name": "x.y", "description": ""}
    )
    assert refused.status == 404
    assert (
        mgmt.get(f"/v1/event-types/{theirs['id']}").json()["description"] == theirs["description"]
    )
    assert mgmt.get(f"/v1/event-types/{theirs['id']}").json()["archived"] is False


def test_a_schema_that_is_not_a_json_schema_is_refused_with_where_and_why(mgmt):
    tenant = make_tenant(mgmt)
    bad = mgmt.post(
        "/v1/event-types",
        {"tenant_id": tenant["id"], "name": "invoice.paid", "schema": {"type": "integr"}},
    )
    assert bad.status == 422
    assert bad.headers["Content-Type"] == "application/problem+json"
    problem = bad.json()
    assert "schema is not a valid JSON Schema" in problem["detail"]
    assert "schema.type" in problem["detail"]
    external = mgmt.post(
        "/v1/event-types",
        {
            "tenant_id": tenant["id"],
            "name": "invoice.paid",
            "schema": {"$ref": "https://example.com/invoice.json"},
        },
    )
    assert (
        external.status == 422 and "only references inside the schema" in external.json()["detail"]
    )
    # The same check on update; the stored schema is left as it was
    created = add_type(mgmt, tenant["id"])
    patched = mgmt.patch(f"/v1/event-types/{created['id']}", {"schema": {"required": "amount"}})
    assert patched.status == 422
    assert mgmt.get(f"/v1/event-types/{created['id']}").json()["schema"] == INVOICE_SCHEMA


@pytest.mark.parametrize("name", ["Invoice.Paid", "invoice..paid", ".paid", "invoice paid"])
def test_a_name_must_be_dotted_lowercase(mgmt, name):
    tenant = make_tenant(mgmt)
    result = mgmt.post("/v1/event-types", {"tenant_id": tenant["id"], "name": name})
    assert result.status == 422
    assert "dotted segments" in result.json()["detail"] or "lowercase" in result.json()["detail"]


def test_a_second_live_type_of_the_same_name_is_a_conflict(mgmt):
    tenant = make_tenant(mgmt)
    add_type(mgmt, tenant["id"])
    again = mgmt.post("/v1/event-types", {"tenant_id": tenant["id"], "name": "invoice.paid"})
    assert again.status == 409 and "already exists" in again.json()["detail"]


def test_create_with_the_same_idempotency_key_returns_the_first_type(mgmt):
    tenant = make_tenant(mgmt)
    body = {"tenant_id": tenant["id"], "name": "invoice.paid", "schema": INVOICE_SCHEMA}
    key = {"Idempotency-Key": "create-invoice-paid"}
    first = mgmt.post("/v1/event-types", body, headers=key)
    second = mgmt.post("/v1/event-types", body, headers=key)
    assert (first.status, second.status) == (201, 201)
    assert second.json() == first.json()
    assert second.headers.get("Idempotent-Replayed") == "true"
    assert len(mgmt.get("/v1/event-types").json()["items"]) == 1
    other = mgmt.post("/v1/event-types", {**body, "name": "invoice.void"}, headers=key)
    assert other.status == 409


def test_a_payload_breaking_the_schema_is_refused_naming_path_and_rule_and_not_stored(mgmt, db):
    # Given a type with a schema
    tenant = make_tenant(mgmt)
    add_type(mgmt, tenant["id"])
    # When a payload breaks it
    refused = mgmt.post(
        "/v1/events",
        {
            "tenant_id": tenant["id"],
            "type": "invoice.paid",
            "payload": {"amount": "ten", "currency": "EUR"},
        },
    )
    # Then it is a 422 that says where and which rule, and nothing is stored
    assert refused.status == 422, refused.body
    problem = refused.json()
    assert "payload.amount" in problem["detail"] and "rule: type" in problem["detail"]
    assert problem["errors"][0]["path"] == "payload.amount"
    assert problem["errors"][0]["rule"] == "type"
    nested = mgmt.post(
        "/v1/events",
        {
            "tenant_id": tenant["id"],
            "type": "invoice.paid",
            "payload": {"amount": 1, "currency": "EUR", "lines": [{"sku": "a"}, {}]},
        },
    )
    assert nested.status == 422
    assert nested.json()["errors"][0]["path"] == "payload.lines[1]"
    assert nested.json()["errors"][0]["rule"] == "required"
    assert events_of(db, tenant["id"]) == []
    # When a payload matches, it is stored
    ok = mgmt.post(
        "/v1/events",
        {
            "tenant_id": tenant["id"],
            "type": "invoice.paid",
            "payload": {"amount": 5, "currency": "USD"},
        },
    )
    assert ok.status == 200, ok.body
    assert [r["type"] for r in events_of(db, tenant["id"])] == ["invoice.paid"]


def test_publish_in_the_callers_transaction_refuses_a_bad_payload_and_stores_nothing(mgmt, db):
    tenant = make_tenant(mgmt)
    add_type(mgmt, tenant["id"])
    with db.connection() as conn:
        with pytest.raises(SchemaViolation) as refused, conn.transaction():
            publish(
                conn,
                tenant_id=tenant["id"],
                type="invoice.paid",
                payload={"amount": -1, "currency": "EUR"},
                settings=get_settings(),
            )
        assert isinstance(refused.value, BadRequest)  # the CLI and callers already handle these
        assert "at payload.amount" in str(refused.value)
        assert "rule: minimum" in str(refused.value)
        with conn.transaction():
            accepted = publish(
                conn,
                tenant_id=tenant["id"],
                type="invoice.paid",
                payload={"amount": 0, "currency": "EUR"},
                settings=get_settings(),
            )
    assert accepted.duplicate is False
    assert [r["type"] for r in events_of(db, tenant["id"])] == ["invoice.paid"]


def test_types_outside_the_catalogue_or_archived_publish_as_before(mgmt, db):
    # Given a type with a schema in tenant A only
    a, b = make_tenant(mgmt, "a"), make_tenant(mgmt, "b")
    created = add_type(mgmt, a["id"])
    breaking = {"amount": "lots"}
    # Then B's payload of the same type is not validated against A's schema
    assert (
        mgmt.post(
            "/v1/events", {"tenant_id": b["id"], "type": "invoice.paid", "payload": breaking}
        ).status
        == 200
    )
    # and a type that is not in the catalogue publishes as before
    assert (
        mgmt.post(
            "/v1/events", {"tenant_id": a["id"], "type": "invoice.sent", "payload": breaking}
        ).status
        == 200
    )
    assert (
        mgmt.post(
            "/v1/events", {"tenant_id": a["id"], "type": "invoice.paid", "payload": breaking}
        ).status
        == 422
    )
    # When the type is archived, its schema no longer applies
    mgmt.request("DELETE", f"/v1/event-types/{created['id']}")
    assert (
        mgmt.post(
            "/v1/events", {"tenant_id": a["id"], "type": "invoice.paid", "payload": breaking}
        ).status
        == 200
    )


def test_an_updated_schema_applies_to_the_next_publish(mgmt):
    # The compiled validator is cached per container; an update must not leave it stale.
    tenant = make_tenant(mgmt)
    created = add_type(mgmt, tenant["id"])
    event = {"tenant_id": tenant["id"], "type": "invoice.paid", "payload": {"amount": 1}}
    assert mgmt.post("/v1/events", event).status == 422  # currency is required
    mgmt.patch(
        f"/v1/event-types/{created['id']}",
        {"schema": {"type": "object", "required": ["amount"]}},
    )
    assert mgmt.post("/v1/events", event).status == 200


# -- patterns: RE2, linear time (docs/decisions/0023) ----------------------------------------

REDOS_SCHEMA = {
    "type": "object",
    "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}},
    "patternProperties": {"^(b+)+$": {"type": "integer"}},
    "additionalProperties": False,
}


def test_a_pathological_pattern_cannot_stall_publishing(mgmt, db):
    # Given a type whose patterns make a backtracking engine take exponential time
    # (Python's re needs hours for these 64-character strings)
    tenant = make_tenant(mgmt)
    add_type(mgmt, tenant["id"], schema=REDOS_SCHEMA)

    def publish_payload(payload):
        body = {"tenant_id": tenant["id"], "type": "invoice.paid", "payload": payload}
        return mgmt.post("/v1/events", body)

    with completes_within(10):
        # When a long string that almost matches is published
        refused = publish_payload({"code": "a" * 63 + "!"})
        # and a property name that almost matches the patternProperties key
        odd_key = publish_payload({"b" * 63 + "!": 1})
        # and payloads that do match
        matching = publish_payload({"code": "a" * 64, "b" * 64: 7})
    # Then each is answered at once: the mismatches are refused naming path and rule
    assert refused.status == 422, refused.body
    assert refused.json()["errors"][0]["path"] == "payload.code"
    assert refused.json()["errors"][0]["rule"] == "pattern"
    assert odd_key.status == 422, odd_key.body
    assert odd_key.json()["errors"][0]["rule"] == "additionalProperties"
    assert matching.status == 200, matching.body
    assert len(events_of(db, tenant["id"])) == 1


def test_ordinary_patterns_validate_as_json_schema_means_them(mgmt, db):
    # Given a type using pattern and patternProperties, with a Unicode property class
    # (JSON Schema's ECMA-262 regexes have \p{..}; Python's re refused it)
    tenant = make_tenant(mgmt)
    schema = {
        "type": "object",
        "properties": {"currency": {"type": "string", "pattern": "^[A-Z]{3}$"}},
        "patternProperties": {"^x-\\p{L}+$": {"type": "string"}},
    }
    add_type(mgmt, tenant["id"], schema=schema)

    def publish_payload(payload):
        body = {"tenant_id": tenant["id"], "type": "invoice.paid", "payload": payload}
        return mgmt.post("/v1/events", body)

    # When payloads match, they are stored
    assert publish_payload({"currency": "EUR", "x-zürich": "yes"}).status == 200
    # When a string breaks the pattern (`$` is the end of the string, as in ECMA-262: Python's
    # re also let a trailing newline through), it is refused naming path and rule
    refused = publish_payload({"currency": "EUR\n"})
    assert refused.status == 422, refused.body
    error = refused.json()["errors"][0]
    assert (error["path"], error["rule"]) == ("payload.currency", "pattern")
    assert error["message"] == "'EUR\\n' does not match '^[A-Z]{3}$'"
    # and a property matched by patternProperties breaks its subschema
    wrong = publish_payload({"currency": "USD", "x-zürich": 1})
    assert wrong.status == 422, wrong.body
    assert wrong.json()["errors"][0]["path"] == "payload.x-zürich"
    assert wrong.json()["errors"][0]["rule"] == "type"
    assert len(events_of(db, tenant["id"])) == 1


def test_a_pattern_re2_cannot_run_is_refused_at_save_naming_where_and_why(mgmt):
    tenant = make_tenant(mgmt)
    # When a schema's pattern uses lookbehind (ECMA-262 and Python have it, RE2 does not)
    lookbehind = mgmt.post(
        "/v1/event-types",
        {
            "tenant_id": tenant["id"],
            "name": "invoice.paid",
            "schema": {"properties": {"code": {"type": "string", "pattern": "(?<=INV-)\\d+"}}},
        },
    )
    # Then it is a 422 that names the pattern's path and why
    assert lookbehind.status == 422, lookbehind.body
    detail = lookbehind.json()["detail"]
    assert "schema.properties.code.pattern" in detail
    assert "invalid perl operator" in detail and "lookaround" in detail
    error = lookbehind.json()["errors"][0]
    assert (error["path"], error["rule"]) == ("schema.properties.code.pattern", "pattern")
    assert error["message"] == "invalid perl operator: (?<="
    # The same on update, for a patternProperties key with a backreference; nothing changes
    created = add_type(mgmt, tenant["id"])
    backreference = mgmt.patch(
        f"/v1/event-types/{created['id']}",
        {"schema": {"patternProperties": {"^(a)\\1$": {"type": "string"}}}},
    )
    assert backreference.status == 422, backreference.body
    assert 'schema.patternProperties["^(a)\\\\1$"]' in backreference.json()["detail"]
    assert "backreferences" in backreference.json()["detail"]
    assert mgmt.get(f"/v1/event-types/{created['id']}").json()["schema"] == INVOICE_SCHEMA
    # and unevaluatedProperties beside patternProperties (jsonschema would run those with re)
    unevaluated = mgmt.patch(
        f"/v1/event-types/{created['id']}",
        {
            "schema": {
                "allOf": [{"patternProperties": {"^x-": {}}}],
                "unevaluatedProperties": False,
            }
        },
    )
    assert unevaluated.status == 422, unevaluated.body
    assert (
        "schema.unevaluatedProperties cannot be combined with patternProperties"
        in (unevaluated.json()["detail"])
    )


def test_a_stored_schema_re2_cannot_run_is_refused_at_publish_not_run(mgmt, db):
    # Given a schema stored before patterns were checked, with a lookahead RE2 cannot run
    tenant = make_tenant(mgmt)
    created = add_type(mgmt, tenant["id"], schema={"type": "object"})
    with db.connection() as conn:
        conn.execute(
            "UPDATE event_types SET schema = %s, updated_at = now() WHERE id = %s",
            ('{"properties": {"code": {"pattern": "^(?=INV)"}}}', created["id"]),
        )
    # When a payload is published (one the lookahead would have let through)
    refused = mgmt.post(
        "/v1/events",
        {"tenant_id": tenant["id"], "type": "invoice.paid", "payload": {"code": "INV-1"}},
    )
    # Then it is refused, saying the schema must be fixed and where, and nothing is stored
    assert refused.status == 422, refused.body
    detail = refused.json()["detail"]
    assert "the schema of event type invoice.paid cannot be used" in detail
    assert "schema.properties.code.pattern" in detail and "fix it" in detail
    assert events_of(db, tenant["id"]) == []
