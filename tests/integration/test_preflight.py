"""`hookline preflight` against moto: the quotas a first `cdk deploy` runs into.

moto answers EC2, Service Quotas, RDS and Lambda's function APIs; Lambda's GetAccountSettings
(the account's concurrency) it does not implement, so a loopback server in front of moto
answers that one call with the account limits a test gives and passes every other on.
"""

from __future__ import annotations

import io
import json
import threading
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import redirect_stdout
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest

from hookline.aws import _client
from hookline_dev.cli import main
from tests.support.aws import REGION, reset_moto

pytestmark = pytest.mark.integration


class Account:
    """The Lambda account limits the loopback front answers GetAccountSettings with."""

    def __init__(self) -> None:
        self.concurrency = 1000
        self.unreserved = 1000


# Alarms reach someone: without a destination preflight fails (test_alarm_destination_...).
PAGED = {"infrastructure": {"alarm_email": "ops@example.com"}}


@pytest.fixture
def account(
    moto_endpoint: str, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Account]:
    reset_moto(moto_endpoint)
    limits = Account()
    paged = tmp_path_factory.mktemp("config") / "hookline.json"
    paged.write_text(json.dumps(PAGED))
    monkeypatch.setenv("HOOKLINE_CONFIG", str(paged))

    class Front(BaseHTTPRequestHandler):
        def _forward(self) -> None:
            if self.path.startswith("/2016-08-19/account-settings"):
                body = json.dumps({"AccountLimit": {
                    "ConcurrentExecutions": limits.concurrency,
                    "UnreservedConcurrentExecutions": limits.unreserved,
                }}).encode()  # fmt: skip
                status, headers = 200, {"content-type": "application/json"}
            else:
                data = self.rfile.read(int(self.headers.get("content-length") or 0))
                request = urllib.request.Request(
                    moto_endpoint + self.path, data=data or None, method=self.command,
                    headers={k: v for k, v in self.headers.items() if k.lower() != "host"},
                )  # fmt: skip
                try:
                    with urllib.request.urlopen(request, timeout=10) as answer:
                        status, body = answer.status, answer.read()
                        headers = dict(answer.headers.items())
                except urllib.error.HTTPError as err:
                    status, body, headers = err.code, err.read(), dict(err.headers.items())
            self.send_response(status)
            for key, value in headers.items():
                if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(key, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = _forward

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Front)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("AWS_REGION", REGION)
    _client.cache_clear()
    try:
        yield limits
    finally:
        server.shutdown()
        server.server_close()
        _client.cache_clear()


def preflight(*args: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["preflight", "--json", *args])
    answer = json.loads(out.getvalue())
    return code, {c["name"]: c for c in answer["checks"]}


def test_a_new_account_with_50_concurrency_is_told_what_to_request(account):
    # Given a new account: Lambda concurrency 50, none reserved
    account.concurrency = account.unreserved = 50
    # When preflight checks the default configuration (25 reserved)
    code, checks = preflight()
    # Then the deploy would fail, and it says which quota to request, and how much
    assert code == 1
    lam = checks["lambda reserved concurrency"]
    assert (lam["ok"], lam["needed"]) == (False, 25)
    assert "L-B99A9384" in lam["advice"] and "at least 125" in lam["advice"]
    # and how to deploy now: without reserved concurrency until the quota is raised
    assert "infrastructure.reserve_concurrency to false" in lam["advice"]
    # And the rest of an empty account fits
    assert all(c["ok"] for name, c in checks.items() if name != "lambda reserved concurrency")


def test_an_account_with_room_passes(account):
    account.concurrency = account.unreserved = 1000
    code, checks = preflight()
    assert code == 0 and all(c["ok"] for c in checks.values())


def test_elastic_ips_in_use_elsewhere_fail_the_nat_gateways(account, moto_endpoint):
    # Given 4 of the region's 5 Elastic IPs in use by something else
    ec2 = boto3.client("ec2", endpoint_url=moto_endpoint, region_name=REGION)
    for _ in range(4):
        ec2.allocate_address(Domain="vpc")
    # When preflight checks a configuration with two NAT gateways
    code, checks = preflight()
    # Then it fails and suggests one NAT gateway or a quota of 6
    eips = checks["elastic ips (nat gateways)"]
    assert code == 1 and (eips["ok"], eips["available"]) == (False, 1)
    assert "nat_gateways to 1" in eips["advice"] and "at least 6" in eips["advice"]


def test_on_an_update_the_stacks_own_reservations_count_as_its_own(
    account, moto_endpoint, tmp_path
):
    # Given a deployed stack whose deliver function reserves 20, in an account of 140
    iam = boto3.client("iam", endpoint_url=moto_endpoint, region_name=REGION)
    role = iam.create_role(
        RoleName="fn", AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17",
                                                            "Statement": []}),
    )["Role"]["Arn"]  # fmt: skip
    code_zip = io.BytesIO()
    with zipfile.ZipFile(code_zip, "w") as z:
        z.writestr("handler.py", "def lambda_handler(event, context):\n    return 1\n")
    lam = boto3.client("lambda", endpoint_url=moto_endpoint, region_name=REGION)
    lam.create_function(
        FunctionName="Hookline-DeliverStandard-abc", Runtime="python3.12", Role=role,
        Handler="handler.lambda_handler", Code={"ZipFile": code_zip.getvalue()},
    )  # fmt: skip
    lam.put_function_concurrency(
        FunctionName="Hookline-DeliverStandard-abc", ReservedConcurrentExecutions=20
    )
    account.concurrency, account.unreserved = 140, 120
    # When preflight checks the same stack again (25 reserved in all)
    code, checks = preflight("--stack", "Hookline")
    # Then its own 20 count as available to it: 120 + 20 - 100 = 40 >= 25
    assert checks["lambda reserved concurrency"]["available"] == 40
    assert checks["lambda reserved concurrency"]["ok"]
    # But for another stack name they are someone else's: 20 left < 25
    code, checks = preflight("--stack", "HooklineStaging")
    assert code == 1 and checks["lambda reserved concurrency"]["available"] == 20


def test_a_hosted_ui_domain_prefix_taken_by_another_pool_fails_the_console(
    account, moto_endpoint, tmp_path
):
    account.concurrency = account.unreserved = 1000
    cognito = boto3.client("cognito-idp", endpoint_url=moto_endpoint, region_name=REGION)
    me = boto3.client("sts", endpoint_url=moto_endpoint, region_name=REGION)
    prefix = f"hookline-{me.get_caller_identity()['Account']}"
    # Given another user pool that already holds the stack's default prefix
    other = cognito.create_user_pool(PoolName="someone-else")["UserPool"]["Id"]
    cognito.create_user_pool_domain(Domain=prefix, UserPoolId=other)
    # When preflight checks the stack
    code, checks = preflight()
    # Then the deploy would fail, and it says which setting to change
    domain = checks["cognito hosted-ui domain"]
    assert code == 1 and not domain["ok"]
    assert prefix in domain["advice"] and "console.cognito_domain_prefix" in domain["advice"]
    # But a configured free prefix fits
    config = tmp_path / "hookline.json"
    config.write_text(
        json.dumps({**PAGED, "console": {"cognito_domain_prefix": "acme-hookline-ops"}})
    )
    code, checks = preflight("--config", str(config))
    assert code == 0 and checks["cognito hosted-ui domain"]["ok"]
    # And one with a word Cognito reserves is refused before asking
    config.write_text(json.dumps({"console": {"cognito_domain_prefix": "my-aws-hooks"}}))
    code, checks = preflight("--config", str(config))
    assert code == 1 and "'aws'" in checks["cognito hosted-ui domain"]["advice"]


def test_on_an_update_the_stacks_own_hosted_ui_domain_fits(account, moto_endpoint):
    account.concurrency = account.unreserved = 1000
    cognito = boto3.client("cognito-idp", endpoint_url=moto_endpoint, region_name=REGION)
    me = boto3.client("sts", endpoint_url=moto_endpoint, region_name=REGION)
    prefix = f"hookline-{me.get_caller_identity()['Account']}"
    # Given the stack's own operators' pool holding its prefix (a deployed stack)
    own = cognito.create_user_pool(PoolName="Hookline-operators")["UserPool"]["Id"]
    cognito.create_user_pool_domain(Domain=prefix, UserPoolId=own)
    # When preflight checks the same stack, then its domain counts as its own
    code, checks = preflight("--stack", "Hookline")
    assert code == 0 and checks["cognito hosted-ui domain"]["advice"] == "fits (this stack's own)"


def test_a_fresh_account_deploys_without_reserved_concurrency(account, tmp_path):
    # Given a fresh account: a concurrency quota of 10, which reserves nothing
    account.concurrency = account.unreserved = 10
    code, checks = preflight()
    assert code == 1 and not checks["lambda reserved concurrency"]["ok"]
    # When the configuration turns reserved concurrency off, as the advice says
    config = tmp_path / "hookline.json"
    config.write_text(json.dumps({"infrastructure": {**PAGED["infrastructure"],
                                                     "reserve_concurrency": False}}))  # fmt: skip
    code, checks = preflight("--config", str(config))
    # Then the stack needs none and fits
    assert (checks["lambda reserved concurrency"]["needed"], code) == (0, 0)


def test_alarm_destination_is_required_and_an_external_topic_must_exist(
    account, moto_endpoint, tmp_path
):
    account.concurrency = account.unreserved = 1000
    config = tmp_path / "hookline.json"
    # Given no alarm destination at all
    config.write_text(json.dumps({}))
    code, checks = preflight("--config", str(config))
    # Then preflight fails: the alarms would reach nobody, and it names the settings
    alarm = checks["alarm destination"]
    assert code == 1 and not alarm["ok"]
    assert "infrastructure.alarm_email" in alarm["advice"]
    assert "infrastructure.alarm_topic_arn" in alarm["advice"]
    # Given an SNS topic ARN that does not exist
    missing = f"arn:aws:sns:{REGION}:123456789012:pager"
    config.write_text(json.dumps({"infrastructure": {"alarm_topic_arn": missing}}))
    code, checks = preflight("--config", str(config))
    assert code == 1 and "cannot be read" in checks["alarm destination"]["advice"]
    # Given one that exists
    sns = boto3.client("sns", endpoint_url=moto_endpoint, region_name=REGION)
    topic = sns.create_topic(Name="pager")["TopicArn"]
    config.write_text(json.dumps({"infrastructure": {"alarm_topic_arn": topic}}))
    code, checks = preflight("--config", str(config))
    assert code == 0 and checks["alarm destination"]["advice"] == f"alarms go to {topic}"


def test_a_region_without_a_service_the_stack_uses_fails(account, monkeypatch, tmp_path):
    account.concurrency = account.unreserved = 1000
    # Given the CLI pointed at ap-east-2, which has no RDS Proxy
    monkeypatch.setenv("AWS_REGION", "ap-east-2")
    _client.cache_clear()
    code, checks = preflight()
    # Then preflight fails before anything is deployed, and lists where it can go
    region = checks["region ap-east-2"]
    assert code == 1 and not region["ok"]
    assert "eu-south-2" in region["advice"]
    # And function URLs are refused where Lambda has none
    monkeypatch.setenv("AWS_REGION", "ap-southeast-4")
    _client.cache_clear()
    config = tmp_path / "hookline.json"
    config.write_text(json.dumps({"infrastructure": {**PAGED["infrastructure"],
                                                     "ingress": "function_url"}}))  # fmt: skip
    code, checks = preflight("--config", str(config))
    assert code == 1 and "function_url" in checks["region ap-southeast-4"]["advice"]
    # but the default front deploys there
    code, checks = preflight()
    assert checks["region ap-southeast-4"]["ok"]
