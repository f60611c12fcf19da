"""`hookline endpoints add|update --filter --transform`: saved through the API, refused at
save with the field and the reason (decisions 0044, 0045)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from hookline_dev.cli import main
from tests.support.management import ManagementClient

pytestmark = pytest.mark.integration

Cli = Callable[..., tuple[int, str, str]]
PATTERN = {"payload": {"amount": [{"numeric": [">", 100]}]}}
TRANSFORM = {"InputPathsMap": {"a": "$.payload.amount"}, "InputTemplate": '{"total": <a>}'}


@pytest.fixture
def cli(management_env: None, capsys: pytest.CaptureFixture) -> Cli:
    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(argv))
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


def test_filter_and_transform_are_saved_shown_and_cleared(cli: Cli, mgmt: ManagementClient):
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    code, out, err = cli(
        "endpoints", "add", "--tenant", tenant["id"], "--url", "https://93.184.216.34/h",
        "--filter", json.dumps(PATTERN), "--transform", json.dumps(TRANSFORM), "--json",
    )  # fmt: skip
    assert code == 0, err
    created = json.loads(out)
    assert created["secret"].startswith("whsec_")
    shown = mgmt.get(f"/v1/endpoints/{created['id']}").json()
    assert (shown["content_filter"], shown["input_transformer"]) == (PATTERN, TRANSFORM)
    code, out, _ = cli("endpoints", "update", created["id"], "--clear-filter", "--json")
    assert code == 0 and json.loads(out)["content_filter"] is None
    assert json.loads(out)["input_transformer"] == TRANSFORM


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--filter", "{nope"), "--filter: not JSON"),
        (("--filter", '{"payload": {"amount": [{"numeric": [">", "1"]}]}}'),
         "filter at payload.amount[0]: numeric bound '1' is not a number"),
        (("--filter", '{"detail": {"x": [1]}}'), "filter at detail: unknown field"),
        (("--transform", '{"InputTemplate": "<amount>"}'),
         "transform.InputTemplate: <amount> is not defined in InputPathsMap"),
        (("--transform", '{"InputPathsMap": {"a": "payload.a"}, "InputTemplate": "<a>"}'),
         "transform.InputPathsMap.a: 'payload.a' is not a JSON path"),
    ],
)  # fmt: skip
def test_a_bad_filter_or_template_is_refused_with_the_field_and_reason(
    cli: Cli, mgmt: ManagementClient, flags: tuple[str, ...], message: str
) -> None:
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    code, out, err = cli(
        "endpoints", "add", "--tenant", tenant["id"], "--url", "https://93.184.216.34/h", *flags
    )
    assert code == 1 and out == ""
    assert message in err
    assert mgmt.get("/v1/endpoints").json()["items"] == []


QUEUE = "arn:aws:sqs:us-east-1:123456789012:orders"
ROLE = "arn:aws:iam::123456789012:role/hookline-delivery-acme"
HOOKLINE_ROLE = "arn:aws:iam::999999999999:role/hookline-deliver-standard"


def test_an_sqs_endpoint_shows_the_external_id_its_role_template_requires(
    cli: Cli, mgmt: ManagementClient
) -> None:
    # Given a tenant and an SQS endpoint through a customer role
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    code, out, err = cli(
        "endpoints", "add", "--tenant", tenant["id"], "--kind", "sqs", "--target", QUEUE,
        "--role-arn", ROLE, "--json",
    )  # fmt: skip
    assert code == 0, err
    created = json.loads(out)
    assert created["secret"].startswith("whsec_") and created["url"] == QUEUE
    # When the operator shows it and prints the role template for the customer
    _, out, _ = cli("endpoints", "show", created["id"], "--json")
    external_id = json.loads(out)["external_id"]
    assert external_id == tenant["external_id"] and external_id.startswith("hkl-")
    code, out, err = cli(
        "endpoints", "role-template", "--tenant", tenant["id"], "--kind", "sqs",
        "--target", QUEUE, "--hookline-role", HOOKLINE_ROLE, "--name", "acme", "--json",
    )  # fmt: skip
    assert code == 0, err
    role = json.loads(out)["Resources"]["HooklineDeliveryRole"]["Properties"]
    # Then the role trusts Hookline's role with that ExternalId, and may only send to the queue
    [trust] = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"AWS": HOOKLINE_ROLE}
    assert trust["Condition"] == {"StringEquals": {"sts:ExternalId": external_id}}
    [allowed] = role["Policies"][0]["PolicyDocument"]["Statement"]
    assert (allowed["Action"], allowed["Resource"]) == (
        ["sqs:SendMessage", "sqs:GetQueueUrl"],
        QUEUE,
    )
    assert ROLE.endswith(role["RoleName"])


def test_auth_tls_and_ed25519_are_set_from_files_and_never_printed(
    cli: Cli, mgmt: ManagementClient, tmp_path
):
    # Given an OAuth2 client and a client certificate in files
    from tests.support.endpoint_auth import TestCA

    ca = TestCA()
    issued = ca.issue("hookline-client", server=False)
    files = {"auth.json": json.dumps({"type": "oauth2_client_credentials",
                                      "token_url": "https://93.184.216.34/token",
                                      "client_id": "hookline", "client_secret": "cli-secret"}),
             "cert.pem": issued.certificate, "key.pem": issued.key, "ca.pem": ca.pem}  # fmt: skip
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    tenant = mgmt.post("/v1/tenants", {"name": "bank"}).json()
    # When an Ed25519 endpoint is added with them, then its TLS is cleared
    code, out, err = cli(
        "endpoints", "add", "--tenant", tenant["id"], "--url", "https://93.184.216.34/h",
        "--signing", "ed25519", "--auth-file", str(tmp_path / "auth.json"),
        "--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem"),
        "--tls-ca", str(tmp_path / "ca.pem"), "--json",
    )  # fmt: skip
    assert code == 0, err
    created = json.loads(out)
    cleared_code, cleared, _ = cli("endpoints", "update", created["id"], "--clear-tls", "--json")
    # Then the endpoint shows what is set, never the secret or the key, and the public key
    assert "cli-secret" not in out and "PRIVATE KEY" not in out
    assert created["auth"]["has_client_secret"] and created["tls"]["has_client_certificate"]
    assert created["secret"] is None and created["public_keys"][0].startswith("whpk_")
    assert cleared_code == 0 and json.loads(cleared)["tls"] is None


def test_the_ordering_key_is_set_changed_and_cleared_from_the_cli(
    cli: Cli, mgmt: ManagementClient
) -> None:
    # Given an endpoint added with an ordering key
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    code, out, err = cli(
        "endpoints", "add", "--tenant", tenant["id"], "--url", "https://93.184.216.34/h",
        "--ordering-key", "$.payload.customer_id", "--json",
    )  # fmt: skip
    assert code == 0, err
    created = json.loads(out)
    assert created["ordering"] == {"key": "$.payload.customer_id"}
    # When it is changed to one order for the whole endpoint, then cleared
    code, out, _ = cli("endpoints", "update", created["id"], "--ordering-key", "endpoint", "--json")
    assert code == 0 and json.loads(out)["ordering"] == {"key": None}
    code, out, _ = cli("endpoints", "update", created["id"], "--clear-ordering", "--json")
    assert code == 0 and json.loads(out)["ordering"] is None
    # And a key that is not a path is refused, naming the field
    code, out, err = cli("endpoints", "update", created["id"], "--ordering-key", "customer")
    assert code == 1 and "ordering.key: 'customer' is not a JSON path" in err
