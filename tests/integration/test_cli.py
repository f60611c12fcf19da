"""The `hookline` command against a real database: each resource command is a management API
request, run in this process (the default) or sent over HTTP to a real server on loopback
that serves the API (`--api URL --key K`); both must give the same results."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from datetime import timedelta

import psycopg
import pytest

from hookline.db import reset_database
from hookline_dev.cli import main
from hookline_dev.local.front import LocalFront
from tests.support.management import ManagementClient
from tests.support.signers import stripe_event, stripe_headers

pytestmark = pytest.mark.integration

KEY = "cli-test-operator-key"
Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def front(management_env: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalFront]:
    """The management API behind a real HTTP server on loopback, as `hookline dev` runs it."""
    monkeypatch.setenv("HOOKLINE_LOCAL_MODE", "1")
    monkeypatch.setenv("HOOKLINE_API_KEY", KEY)
    reset_database()
    from functions.api.handler import lambda_handler

    served = LocalFront(lambda_handler, port=0)
    served.start()
    yield served
    served.stop()


@pytest.fixture(params=["in-process", "http"])
def cli(request: pytest.FixtureRequest, management_env: None, capsys: pytest.CaptureFixture) -> Cli:
    """Run `hookline …` in this process, or against the loopback API (then with `--api`)."""
    remote: list[str] = []
    if request.param == "http":
        remote = ["--api", request.getfixturevalue("front").url, "--key", KEY]

    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()  # drop what earlier steps (e.g. the receiver's logs) printed
        code = main([*argv, *remote])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


def test_an_operator_sets_up_a_tenant_source_and_endpoint_seen_by_the_api(
    cli: Cli, mgmt: ManagementClient, api, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an operator at a terminal
    # When they create a tenant, a Stripe source and an endpoint
    code, out, _ = cli("tenants", "add", "acme", "--group", "priority", "--json")
    assert code == 0
    tenant = json.loads(out)
    assert (tenant["name"], tenant["group"]) == ("acme", "priority")
    code, out, _ = cli(
        "sources", "add", "--tenant", tenant["id"], "--scheme", "stripe", "--secret", "whsec_x",
        "--json",
    )  # fmt: skip
    assert code == 0
    source = json.loads(out)
    assert source["path"] == f"/in/{source['id']}" and source["secret"] is None  # theirs
    code, out, _ = cli(
        "endpoints", "add", "--tenant", tenant["id"], "--url", "https://93.184.216.34/hook",
        "--events", "charge.*, invoice.paid", "--rate-limit", "600/m", "--json",
    )  # fmt: skip
    assert code == 0
    endpoint = json.loads(out)
    assert endpoint["secret"].startswith("whsec_")  # shown this once
    assert endpoint["event_types"] == ["charge.*", "invoice.paid"]
    assert endpoint["rate_limit_per_second"] == 10

    # Then the API shows the same objects, and each `show --json` is the API's JSON
    for kind, obj in (("tenants", tenant), ("sources", source), ("endpoints", endpoint)):
        through_api = mgmt.get(f"/v1/{kind}/{obj['id']}").json()
        assert through_api["id"] == obj["id"]
        code, out, _ = cli(kind, "show", obj["id"], "--json")
        assert code == 0 and json.loads(out) == through_api
    # And secrets are never shown again
    code, out, _ = cli("endpoints", "list", "--tenant", tenant["id"], "--json")
    assert endpoint["secret"] not in out
    assert json.loads(out) == mgmt.get("/v1/endpoints", tenant_id=tenant["id"]).json()
    code, out, _ = cli("endpoints", "list")
    assert "URL" in out and "93.184.216.34" in out and endpoint["secret"] not in out

    # When a signed webhook arrives, the ledger shows it
    body = stripe_event("evt_cli", type="charge.refunded")
    assert (
        api.post(source["path"], headers=stripe_headers("whsec_x", body), body=body).status == 200
    )
    code, out, _ = cli("events", "list", "--tenant", tenant["id"], "--since", "1h", "--json")
    listed = json.loads(out)
    assert [e["type"] for e in listed["items"]] == ["charge.refunded"]
    code, out, _ = cli("events", "show", listed["items"][0]["id"], "--json")
    assert json.loads(out)["payload"]["id"] == "evt_cli"
    code, out, _ = cli("events", "list")
    assert "charge.refunded" in out and "TYPE" in out  # a readable table


def test_an_operator_changes_endpoints_and_sources(cli: Cli, mgmt: ManagementClient) -> None:
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    _, out, _ = cli(
        "endpoints", "add", "--tenant", tenant["id"], "--url", "https://93.184.216.34/h", "--json"
    )
    created = json.loads(out)
    # Disable with a reason, enable, update, rotate
    _, out, _ = cli("endpoints", "disable", created["id"], "--reason", "maintenance", "--json")
    assert json.loads(out)["enabled"] is False
    assert mgmt.get(f"/v1/endpoints/{created['id']}").json()["disabled_reason"] == "maintenance"
    _, out, _ = cli("endpoints", "enable", created["id"], "--json")
    assert json.loads(out)["enabled"] is True
    code, out, _ = cli(
        "endpoints", "update", created["id"], "--max-concurrency", "9", "--header", "X-Team: a",
        "--json",
    )  # fmt: skip
    assert code == 0
    assert (json.loads(out)["max_concurrency"], json.loads(out)["headers"]) == (9, {"X-Team": "a"})
    code, out, _ = cli("endpoints", "rotate-secret", created["id"], "--json")
    assert code == 0 and json.loads(out)["secret"] not in ("", created["secret"])
    # A source without a secret gets a generated one, shown once; rotation too
    code, out, _ = cli("sources", "add", "--tenant", tenant["id"], "--scheme", "standard", "--json")
    source = json.loads(out)
    assert code == 0 and source["secret"]
    _, out, _ = cli("sources", "disable", source["id"], "--json")
    assert json.loads(out)["enabled"] is False
    code, out, _ = cli("sources", "rotate-secret", source["id"], "--json")
    rotated = json.loads(out)
    assert code == 0 and rotated["secret"] not in (None, source["secret"])
    assert rotated["previous_kept"] is True


def test_publish_is_an_alias_of_events_publish_and_dedupes(cli: Cli, mgmt: ManagementClient):
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    argv = ["--tenant", tenant["id"], "--type", "user.signed_up", "--data", '{"u": 1}']
    code, out, _ = cli("publish", *argv, "--idempotency-key", "k1", "--json")
    first = json.loads(out)
    assert code == 0 and first["duplicate"] is False
    code, out, _ = cli("events", "publish", *argv, "--idempotency-key", "k1", "--json")
    assert json.loads(out) == {"id": first["id"], "duplicate": True}


def test_lists_page_with_limit_and_all(cli: Cli, mgmt: ManagementClient) -> None:
    # Given five tenants
    for n in range(5):
        mgmt.post("/v1/tenants", {"name": f"t{n}"})
    everything = mgmt.get("/v1/tenants").json()
    assert len(everything["items"]) == 5
    # When listing two, the answer is the API's first page, cursor included
    code, out, _ = cli("tenants", "list", "--limit", "2", "--json")
    page = json.loads(out)
    assert code == 0 and page == mgmt.get("/v1/tenants", limit=2).json()
    assert page["next_cursor"]
    code, out, _ = cli("tenants", "list", "--limit", "2")
    assert f"--cursor {page['next_cursor']}" in out  # the table says there is more
    # And --all follows the cursors to the end, two at a time
    code, out, _ = cli("tenants", "list", "--all", "--limit", "2", "--json")
    assert json.loads(out) == everything
    code, out, _ = cli("tenants", "list", "--limit", "3", "--cursor", page["next_cursor"], "--json")
    assert json.loads(out)["items"] == everything["items"][2:]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("tenants", "add", "acme", "--group", "nope"), "unknown tenant group"),
        (
            ("sources", "add", "--tenant", "ten_x", "--scheme", "stripe", "--secret", "s"),
            "no tenant ten_x",
        ),
        (("publish", "--tenant", "t", "--type", "x", "--data", "{bad"), "valid JSON"),
        (("events", "show", "evt_missing"), "no event evt_missing"),
        (("endpoints", "update", "ep_x", "--max-concurrency", "0"), "max_concurrency"),
        (("endpoints", "add", "--tenant", "t", "--url", "https://a.b/", "--rate-limit", "fast"),
         "rate limit"),
        (("deliveries", "list", "--since", "yesterday"), "is not a time"),
    ],
)  # fmt: skip
def test_a_refused_request_exits_1_with_the_reason(cli: Cli, argv, message) -> None:
    code, out, err = cli(*argv)
    assert code == 1
    assert message in err and err.startswith("error: ") and len(err.splitlines()) == 1
    assert out == ""  # no log lines on stdout either


def test_a_private_endpoint_url_is_refused_with_the_reason(cli: Cli, mgmt: ManagementClient):
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    code, out, err = cli(
        "endpoints", "add", "--tenant", tenant["id"], "--url", "https://10.0.0.5/hook"
    )
    assert code == 1 and "public addresses" in err and out == ""


def test_migrate_is_safe_to_run_again(database_url, monkeypatch, capsys) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    capsys.readouterr()
    assert main(["migrate", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["applied"] == []


def test_migrate_keeps_the_receipt_lease_at_the_configured_queued_lease(
    database_url, monkeypatch, capsys, tmp_path
) -> None:
    config = tmp_path / "hookline.json"
    config.write_text(json.dumps({"delivery_queued_lease_seconds": 600}))
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("HOOKLINE_CONFIG", str(config))
    assert main(["migrate", "--json"]) == 0
    with psycopg.connect(database_url) as conn:
        [(receipt_lease,)] = conn.execute("SELECT hookline_receipt_lease()").fetchall()
    assert receipt_lease == timedelta(minutes=10)


@pytest.mark.parametrize("mode", ["in-process", "http"])
def test_a_database_that_is_down_exits_3(
    mode: str, management_env: None, monkeypatch: pytest.MonkeyPatch, capsys, request
) -> None:
    from hookline_dev.localpg import free_port

    monkeypatch.setenv("DATABASE_URL", f"postgresql://postgres@127.0.0.1:{free_port()}/postgres")
    monkeypatch.setenv("HOOKLINE_DB_CONNECT_TIMEOUT", "0.5")
    remote = []
    if mode == "http":
        remote = ["--api", request.getfixturevalue("front").url, "--key", KEY]
    started = time.monotonic()
    assert main(["tenants", "list", *remote]) == 3
    assert "database unavailable" in capsys.readouterr().err
    if mode == "in-process":  # a command on the database itself says what the driver said
        assert main(["retention", "--once", "--dry-run"]) == 3
        assert "database unavailable (PoolTimeout: couldn't get" in capsys.readouterr().err
    assert time.monotonic() - started < 10


def test_without_a_database_or_an_api_the_cli_says_how_to_point_it_somewhere(
    management_env: None, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    # Given a terminal with no DATABASE_URL and no --api
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("HOOKLINE_DATABASE_SECRET_ARN", raising=False)
    monkeypatch.delenv("HOOKLINE_API_URL", raising=False)
    # When a resource command runs, Then it exits 1 with what to set, and no traceback
    assert main(["tenants", "list"]) == 1
    err = capsys.readouterr().err
    assert "set DATABASE_URL" in err and "--api URL" in err and "Traceback" not in err


def test_an_api_that_cannot_be_reached_exits_3(management_env: None, capsys) -> None:
    from hookline_dev.localpg import free_port

    assert main(["tenants", "list", "--api", f"http://127.0.0.1:{free_port()}", "--key", KEY]) == 3
    assert "cannot reach the API" in capsys.readouterr().err


def test_the_api_s_log_lines_stay_out_of_the_command_s_output(management_env: None) -> None:
    """Run as a user would (a new process, whose stdout Powertools logs to by default)."""
    import os
    import subprocess
    import sys

    refused = subprocess.run(
        [sys.executable, "-m", "hookline_dev.cli", "tenants", "add", "acme", "--group", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "POWERTOOLS_LOG_LEVEL": "DEBUG"},
    )
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith("error: unknown tenant group 'nope'")


def test_an_operator_keeps_an_event_type_catalogue(
    cli: Cli, mgmt: ManagementClient, tmp_path
) -> None:
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    schema = {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}
    (tmp_path / "order.json").write_text(json.dumps(schema))
    # When the operator adds a type with a schema from a file
    code, out, _ = cli(
        "event-types", "add", "order.created", "--tenant", tenant["id"],
        "--description", "an order", "--schema-file", str(tmp_path / "order.json"), "--json",
    )  # fmt: skip
    assert code == 0
    created = json.loads(out)
    assert (created["name"], created["schema"]) == ("order.created", schema)
    # Then a payload that breaks it is refused with the API's reason, and one that fits is not
    code, out, err = cli(
        "publish", "--tenant", tenant["id"], "--type", "order.created", "--data", '{"n": "x"}'
    )
    assert code == 1 and out == "" and "at payload.n: 'x' is not of type 'integer'" in err
    code, _, _ = cli(
        "publish", "--tenant", tenant["id"], "--type", "order.created", "--data", '{"n": 1}'
    )
    assert code == 0
    # And the catalogue is listed, shown, updated and archived as the API has it
    code, out, _ = cli("event-types", "list", "--tenant", tenant["id"], "--json")
    assert json.loads(out) == mgmt.get("/v1/event-types", tenant_id=tenant["id"]).json()
    code, out, _ = cli("event-types", "update", created["id"], "--description", "paid", "--json")
    assert json.loads(out)["description"] == "paid"
    code, out, _ = cli("event-types", "archive", created["id"], "--json")
    assert json.loads(out)["archived"] is True
    code, out, _ = cli("event-types", "list", "--tenant", tenant["id"], "--json")
    assert json.loads(out)["items"] == []
    code, out, _ = cli("event-types", "list", "--archived")
    assert "order.created" in out and "ARCHIVED" in out
    code, out, _ = cli("event-types", "show", created["id"], "--json")
    assert json.loads(out) == mgmt.get(f"/v1/event-types/{created['id']}").json()
    code, _, err = cli("event-types", "add", "x.y", "--tenant", tenant["id"], "--schema", "{")
    assert code == 1 and "--schema must be valid JSON" in err


def test_json_may_come_before_or_after_the_command(cli: Cli) -> None:
    # Given a tenant
    assert cli("tenants", "add", "acme")[0] == 0
    # When the list is asked for with --json before the command, after it, or not at all
    before = json.loads(cli("--json", "tenants", "list")[1])
    after = json.loads(cli("tenants", "list", "--json")[1])
    table = cli("tenants", "list")[1]
    # Then both JSON forms print the API's page, and without it a table
    assert before == after and [t["name"] for t in before["items"]] == ["acme"]
    assert table.splitlines()[0].split()[0] == "ID" and "acme" in table


def test_an_operator_opts_a_tenant_in_to_notifications_and_out_again(
    cli: Cli, mgmt: ManagementClient
) -> None:
    # Given a tenant that never opted in to e-mail or chat messages
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()["id"]
    code, out, _ = cli("notifications", "show", tenant, "--json")
    assert code == 0 and json.loads(out) == {"tenant_id": tenant, "emails": [], "chat_url": None}
    # When the operator opts it in to two addresses and a chat webhook
    code, out, err = cli(
        "notifications", "set", tenant, "--email", "oncall@acme.example", "--email",
        "cto@acme.example", "--chat-url", "https://93.184.216.34/chat", "--json",
    )  # fmt: skip
    # Then the API holds them, and `show` prints them
    opted = {"tenant_id": tenant, "emails": ["cto@acme.example", "oncall@acme.example"],
             "chat_url": "https://93.184.216.34/chat"}  # fmt: skip
    assert code == 0, err
    assert json.loads(out) == opted == mgmt.get(f"/v1/tenants/{tenant}/notifications").json()
    code, out, _ = cli("notifications", "show", tenant)
    assert code == 0 and "oncall@acme.example" in out and "https://93.184.216.34/chat" in out
    # When a private chat URL or a bad address is given, it is refused, naming the field
    code, _, err = cli("notifications", "set", tenant, "--chat-url", "https://10.0.0.1/x")
    assert code == 1 and err.startswith("error: chat_url:") and "public addresses" in err
    code, _, err = cli("notifications", "set", tenant, "--email", "not-an-address")
    assert code == 1 and "emails: 'not-an-address'" in err
    # And a `set` that says nothing is refused rather than opting the tenant out
    code, _, err = cli("notifications", "set", tenant)
    assert code == 1 and "--off" in err
    assert mgmt.get(f"/v1/tenants/{tenant}/notifications").json() == opted
    # When it is opted out, nothing is left
    code, out, _ = cli("notifications", "set", tenant, "--off", "--json")
    assert code == 0 and json.loads(out) == {"tenant_id": tenant, "emails": [], "chat_url": None}
