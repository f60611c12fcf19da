"""One event never stalls another in the fan-out (decision 0059): whatever raises while
matching one event — a filter over its budget (decision 0060), a pattern that fails — is
quarantined against that (event, endpoint) pair with its reason; every other event, of every
tenant, fans out in the same run; an operator decides the pair again once the cause is fixed."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.management import endpoint_service
from hookline.repositories import quarantine
from hookline.repositories import replay as replay_repo
from hookline.repositories.deliveries import fan_out_batch
from hookline.repositories.ledger import NewEvent, store_event
from hookline.repositories.reconcile import create_missing_deliveries
from hookline.settings import Settings
from tests.support import operator
from tests.support.management import as_tenant
from tests.support.operator import OPERATOR

pytestmark = pytest.mark.integration

# The probe's body: 6 KB of `[`, 3,000 levels deep (issue 23, finding 1).
DEEP = b"[" * 3000 + b"]" * 3000
HOUR = timedelta(hours=1)
BIG = {"payload": {"amount": [{"numeric": [">", 100]}]}}


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings.from_env(
        {"DATABASE_URL": database_url, "HOOKLINE_ALLOW_PRIVATE_TARGETS": "1",
         "HOOKLINE_ALLOW_HTTP_TARGETS": "1"}
    )  # fmt: skip


def add(db: Database, settings: Settings, tenant_id: str, **options: Any) -> str:
    return str(
        operator.add_endpoint(
            db, settings, tenant_id=tenant_id, url="http://127.0.0.1:9/x", **options
        )["id"]
    )


def store_deep(db: Database, tenant_id: str, source_id: str) -> str:
    """The deep body as the receiver stored it before bodies were bounded at receive (an
    `hmac` source with `require_json: false` kept it; a restore from the archive can too)."""
    with db.connection() as conn:
        event = NewEvent(
            tenant_id=tenant_id, origin=source_id, source_id=source_id, type="probe.deep",
            dedupe_key="deep-1", payload=DEEP, content_type="text/plain",
        )  # fmt: skip
        return store_event(conn, event).id


def pairs(db: Database) -> set[tuple[str, str]]:
    with db.connection() as conn:
        rows = conn.execute("SELECT event_id, endpoint_id FROM deliveries").fetchall()
    return {(r["event_id"], r["endpoint_id"]) for r in rows}


def quarantined(db: Database) -> dict[tuple[str, str], dict[str, Any]]:
    with db.connection() as conn:
        rows = quarantine.list_page(conn, tenant_id=None, limit=100)
    return {(r["event_id"], r["endpoint_id"]): r for r in rows}


def publish(db: Database, tenant_id: str, type: str, payload: dict[str, Any]) -> str:
    with db.connection() as conn, conn.transaction():
        return hookline.publish(conn, tenant_id=tenant_id, type=type, payload=payload).id


def two_tenants(db: Database, settings: Settings) -> dict[str, str]:
    """Tenant A (the prober: an hmac source, a filtered and a plain endpoint) and tenant B
    (a filtered endpoint too, so its events share A's fan-out statement)."""
    config = HooklineConfig()
    a = operator.add_tenant(db, config, name="prober", group="standard")["id"]
    b = operator.add_tenant(db, config, name="bystander", group="standard")["id"]
    source = operator.add_source(
        db, tenant_id=a, scheme="hmac", secrets=["s3cret"],
        options={"header": "X-Sig", "require_json": False},
    )  # fmt: skip
    return {
        "a": a, "b": b, "source": source["id"],
        "a_filtered": add(db, settings, a, content_filter={"payload": {"x": [{"exists": True}]}}),
        "a_plain": add(db, settings, a),
        "b_filtered": add(db, settings, b, content_filter=BIG),
    }  # fmt: skip


def costly(db: Database, settings: Settings, t: dict[str, str]) -> str:
    """Make A's filtered endpoint a pattern of 200 prefixes (valid at save) and publish an
    event of 5,000 strings under it: 2 million steps, over the event's budget (decision
    0060), so matching it raises EvaluationBudgetExceeded."""
    endpoint_service.update_endpoint(
        db, settings, OPERATOR, t["a_filtered"],
        {"content_filter": {"payload": {"x": [{"prefix": f"p{i}"} for i in range(200)]}}},
    )  # fmt: skip
    return publish(db, t["a"], "order.created", {"x": ["y"] * 5000})


def test_a_deep_or_too_costly_payload_never_stops_the_fan_out(
    db: Database, settings: Settings
) -> None:
    # Given tenant A's deep event stored first, A's event over its filter budget, then
    # ordinary events of A and of tenant B
    t = two_tenants(db, settings)
    deep = store_deep(db, t["a"], t["source"])
    a_next = publish(db, t["a"], "order.created", {"x": 1})
    bomb = costly(db, settings, t)
    b_big = publish(db, t["b"], "invoice.paid", {"amount": 500})
    # When one fan-out batch takes them all
    with db.connection() as conn:
        events, created = fan_out_batch(conn, limit=100, deadline=HOUR)
    # Then the batch committed: A's next event and B's event reached their endpoints, and the
    # deep and costly events still reached A's endpoint without a filter; the deep payload is
    # absent from its document (decision 0060), so the filter decided it: no match
    assert events == 4
    assert pairs(db) == {
        (a_next, t["a_plain"]), (b_big, t["b_filtered"]), (deep, t["a_plain"]),
        (bomb, t["a_plain"]),
    }  # fmt: skip
    assert created == 4
    # And the costly event's filtered pair is quarantined with its reason, not lost
    held = quarantined(db)
    assert set(held) == {(bomb, t["a_filtered"])}
    assert held[bomb, t["a_filtered"]]["reason"].startswith(
        "content filter: EvaluationBudgetExceeded: content filters took more than 100000 steps"
    )
    assert held[bomb, t["a_filtered"]]["stage"] == "fanout"
    # And nothing is claimed again: the next run finds an empty outbox
    with db.connection() as conn:
        assert fan_out_batch(conn, limit=100, deadline=HOUR) == (0, 0)


def test_any_exception_from_a_pattern_is_that_pairs_and_retry_decides_it_once_fixed(
    db: Database, settings: Settings
) -> None:
    # Given a pattern stored before today's checks that makes matching raise (a numeric
    # bound that is not a number), beside a sound one on the same tenant
    t = two_tenants(db, settings)
    with db.connection() as conn:
        conn.execute(
            "UPDATE endpoints SET content_filter = %s::jsonb WHERE id = %s",
            ('{"payload": {"amount": [{"numeric": [">", "x"]}]}}', t["a_filtered"]),
        )
    event = publish(db, t["a"], "invoice.paid", {"amount": 500})
    other = publish(db, t["b"], "invoice.paid", {"amount": 500})
    # When the fan-out runs
    with db.connection() as conn:
        fan_out_batch(conn, limit=100, deadline=HOUR)
    # Then the failing pair is quarantined with the exception's class, the rest delivered
    assert pairs(db) == {(event, t["a_plain"]), (other, t["b_filtered"])}
    reason = quarantined(db)[event, t["a_filtered"]]["reason"]
    assert reason.startswith("content filter: ") and "Error" in reason
    # And a retry before the cause is fixed keeps it, counting the failure
    with db.connection() as conn:
        again = quarantine.retry(conn, tenant_id=t["a"], event_ids=None, limit=10, deadline=HOUR)
    assert (again.delivered, again.released, len(again.still_failing)) == ([], [], 1)
    assert quarantined(db)[event, t["a_filtered"]]["failures"] == 2
    # When the operator fixes the pattern and retries
    endpoint_service.update_endpoint(
        db, settings, OPERATOR, t["a_filtered"], {"content_filter": BIG}
    )
    with db.connection() as conn:
        done = quarantine.retry(conn, tenant_id=t["a"], event_ids=None, limit=10, deadline=HOUR)
    # Then the pair is decided by the fixed pattern: delivered, and out of quarantine
    assert done.delivered == [(event, t["a_filtered"])]
    assert (event, t["a_filtered"]) in pairs(db)
    assert quarantined(db) == {}


def test_the_reconcilers_repair_quarantines_instead_of_failing(
    db: Database, settings: Settings
) -> None:
    # Given A's event over its filter budget fanned out... as the repair sees it: fanned
    # out, lacking its delivery to a filtered endpoint that predates it
    t = two_tenants(db, settings)
    bomb = costly(db, settings, t)
    with db.connection() as conn:
        conn.execute("UPDATE outbox SET fanned_out_at = now() WHERE event_id = %s", (bomb,))
    ok = publish(db, t["b"], "invoice.paid", {"amount": 500})
    with db.connection() as conn:
        conn.execute("UPDATE outbox SET fanned_out_at = now() WHERE event_id = %s", (ok,))
    # When the reconciler's repair walks the window
    with db.connection() as conn:
        create_missing_deliveries(conn, window=HOUR, deadline=HOUR, limit=100)
    # Then the other tenant's missing delivery is created and the costly pair quarantined
    assert (ok, t["b_filtered"]) in pairs(db)
    held = quarantined(db)
    assert held[bomb, t["a_filtered"]]["stage"] == "reconcile"


def test_the_api_and_cli_show_quarantined_pairs_in_scope_and_retry_them(
    db: Database, settings: Settings, mgmt: Any, cli: Any
) -> None:
    # Given a pair quarantined by a failing pattern of tenant A, and tenant B's own event
    t = two_tenants(db, settings)
    with db.connection() as conn:
        conn.execute(
            "UPDATE endpoints SET content_filter = %s::jsonb WHERE id = %s",
            ('{"payload": {"amount": [{"numeric": [">", "x"]}]}}', t["a_filtered"]),
        )
    event = publish(db, t["a"], "invoice.paid", {"amount": 500})
    publish(db, t["b"], "invoice.paid", {"amount": 500})
    with db.connection() as conn:
        fan_out_batch(conn, limit=100, deadline=HOUR)
    # When tenant A, tenant B and the operator list the quarantine
    seen_by_a = as_tenant(mgmt, db, t["a"]).request("GET", "/v1/fanout-quarantine").json()
    seen_by_b = as_tenant(mgmt, db, t["b"]).request("GET", "/v1/fanout-quarantine").json()
    code, out, _ = cli("quarantine", "list")
    # Then A sees its pair with the reason, B sees nothing of A's, the CLI shows the reason
    [item] = seen_by_a["items"]
    assert (item["event_id"], item["endpoint_id"]) == (event, t["a_filtered"])
    assert item["reason"].startswith("content filter: ")
    assert seen_by_b["items"] == []
    assert code == 0 and event in out and "content filter" in out
    # When tenant B retries, nothing of A's is touched
    retried = as_tenant(mgmt, db, t["b"]).post("/v1/fanout-quarantine/retry", {})
    assert retried.status == 200 and retried.json()["delivered"] == 0
    # When the operator fixes the pattern and retries from the CLI
    endpoint_service.update_endpoint(
        db, settings, OPERATOR, t["a_filtered"], {"content_filter": BIG}
    )
    code, out, _ = cli("quarantine", "retry", "--tenant", t["a"])
    # Then the pair is delivered and the quarantine is empty
    assert code == 0 and re.search(r"^delivered\s+1$", out, re.MULTILINE)
    assert (event, t["a_filtered"]) in pairs(db)
    assert mgmt.request("GET", "/v1/fanout-quarantine").json()["items"] == []


def test_replays_refanout_quarantines_and_its_dry_run_records_nothing(
    db: Database, settings: Settings
) -> None:
    # Given A's event over its filter budget and B's event, their deliveries lost
    t = two_tenants(db, settings)
    bomb = costly(db, settings, t)
    ok = publish(db, t["b"], "invoice.paid", {"amount": 500})
    with db.connection() as conn:
        conn.execute("UPDATE outbox SET fanned_out_at = now()")
    # When a replay counts what it would re-create (its dry run)
    with db.connection() as conn:
        replay_repo.count_missing(conn, [bomb, ok], None)
    # Then nothing is quarantined by counting
    assert quarantined(db) == {}
    # When it re-fans them out
    with db.connection() as conn:
        replay_repo.create_missing(conn, [bomb, ok], None, deadline=HOUR, hold=timedelta(seconds=0))
    # Then B's delivery and A's plain one are re-created and A's costly pair quarantined
    assert {(ok, t["b_filtered"]), (bomb, t["a_plain"])} <= pairs(db)
    assert quarantined(db)[bomb, t["a_filtered"]]["stage"] == "replay"
