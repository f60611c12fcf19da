"""The `hookline` command against a real database."""

from __future__ import annotations

import json
import time

import pytest

from hookline.cli import main
from tests.support.signers import stripe_event, stripe_headers

pytestmark = pytest.mark.integration


@pytest.fixture
def cli(database_url, monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", database_url)

    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()  # drop what earlier steps (e.g. the receiver's logs) printed
        code = main(list(argv))
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


def test_an_operator_sets_up_a_tenant_and_source_and_reads_the_ledger(cli, api):
    code, out, _ = cli("tenants", "add", "acme", "--group", "priority", "--json")
    assert code == 0
    tenant = json.loads(out)
    assert tenant["name"] == "acme" and tenant["group"] == "priority"

    code, out, _ = cli(
        "sources",
        "add",
        "--tenant",
        tenant["id"],
        "--scheme",
        "stripe",
        "--secret",
        "whsec_x",
        "--json",
    )
    source = json.loads(out)
    assert source["path"] == f"/in/{source['id']}"

    body = stripe_event("evt_cli", type="charge.refunded")
    assert (
        api.post(source["path"], headers=stripe_headers("whsec_x", body), body=body).status == 200
    )

    code, out, _ = cli("events", "list", "--tenant", tenant["id"], "--json")
    listed = json.loads(out)
    assert [e["type"] for e in listed] == ["charge.refunded"]

    code, out, _ = cli("events", "show", listed[0]["id"], "--json")
    shown = json.loads(out)
    assert shown["dedupe_key"] == "evt_cli"
    assert shown["payload"]["id"] == "evt_cli"
    assert shown["received_at"]

    code, out, _ = cli("events", "list")
    assert "charge.refunded" in out and "TYPE" in out  # a readable table


def test_publish_from_the_command_line(cli):
    _, out, _ = cli("tenants", "add", "acme", "--json")
    tenant = json.loads(out)
    code, out, _ = cli(
        "publish",
        "--tenant",
        tenant["id"],
        "--type",
        "user.signed_up",
        "--data",
        '{"u": 1}',
        "--json",
    )
    assert code == 0 and json.loads(out)["duplicate"] is False


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("tenants", "add", "acme", "--group", "nope"), "unknown tenant group"),
        (
            ("sources", "add", "--tenant", "ten_x", "--scheme", "stripe", "--secret", "s"),
            "no tenant",
        ),
        (("sources", "add", "--tenant", "ten_x", "--scheme", "hmac", "--secret", "s"), "header"),
        (("publish", "--tenant", "t", "--type", "x", "--data", "{bad"), "valid JSON"),
        (("events", "show", "evt_missing"), "no event"),
    ],
)
def test_bad_input_exits_non_zero_with_a_clear_message(cli, argv, message):
    code, out, err = cli(*argv)
    assert code == 1
    assert message in err
    assert out == ""


def test_migrate_is_safe_to_run_again(cli):
    code, out, _ = cli("migrate", "--json")
    assert code == 0
    assert json.loads(out)["applied"] == []


def test_a_database_that_is_down_exits_3(monkeypatch, capsys):
    from hookline.localpg import free_port

    monkeypatch.setenv("DATABASE_URL", f"postgresql://postgres@127.0.0.1:{free_port()}/postgres")
    monkeypatch.setenv("HOOKLINE_DB_CONNECT_TIMEOUT", "0.5")
    started = time.monotonic()
    assert main(["tenants", "list"]) == 3
    assert "database unavailable" in capsys.readouterr().err
    assert time.monotonic() - started < 10


def test_an_operator_manages_endpoints(cli, monkeypatch):
    _, out, _ = cli("tenants", "add", "acme", "--json")
    tenant = json.loads(out)
    # A private address is refused when saved (the default), with the reason
    code, out, err = cli(
        "endpoints", "add", "--tenant", tenant["id"], "--url", "https://10.0.0.5/hook"
    )
    assert code == 1 and "public addresses" in err
    monkeypatch.setenv("HOOKLINE_ALLOW_PRIVATE_TARGETS", "1")
    code, out, _ = cli(
        "endpoints", "add", "--tenant", tenant["id"], "--url", "https://127.0.0.1:9/hook",
        "--events", "payment_intent.*, charge.refunded", "--rate-limit", "600/m", "--json",
    )  # fmt: skip
    assert code == 0
    created = json.loads(out)
    assert created["secret"].startswith("whsec_")
    assert created["event_types"] == ["payment_intent.*", "charge.refunded"]
    assert created["rate_limit_per_second"] == 10
    # The secret is shown once: never by list or show
    _, out, _ = cli("endpoints", "list", "--tenant", tenant["id"], "--json")
    assert created["secret"] not in out and json.loads(out)[0]["id"] == created["id"]
    _, out, _ = cli("endpoints", "disable", created["id"], "--reason", "maintenance", "--json")
    assert json.loads(out)["enabled"] is False
    _, out, _ = cli("endpoints", "show", created["id"], "--json")
    assert json.loads(out)["disabled_reason"] == "maintenance" and created["secret"] not in out
    _, out, _ = cli("endpoints", "enable", created["id"], "--json")
    assert json.loads(out)["enabled"] is True
    code, out, _ = cli("endpoints", "rotate-secret", created["id"], "--json")
    rotated = json.loads(out)
    assert code == 0 and rotated["secret"] != created["secret"]
    code, _, err = cli(
        "endpoints",
        "add",
        "--tenant",
        tenant["id"],
        "--url",
        "https://127.0.0.1/x",
        "--rate-limit",
        "fast",
    )
    assert code == 1 and "rate limit" in err
