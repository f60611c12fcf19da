"""The role template customers deploy for AWS destinations is valid CloudFormation for
every kind (cfn-lint), and grants one send action on the one target (decision 0046)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hookline.destinations.role_template import SEND_ACTIONS, role_template

pytestmark = pytest.mark.infra

TARGETS = {
    "sqs": "arn:aws:sqs:eu-west-1:123456789012:orders.fifo",
    "sns": "arn:aws:sns:eu-west-1:123456789012:orders",
    "eventbridge": "arn:aws:events:eu-west-1:123456789012:event-bus/customer",
    "kinesis": "arn:aws:kinesis:eu-west-1:123456789012:stream/orders",
    "s3": "arn:aws:s3:::acme-webhooks",
    "lambda": "arn:aws:lambda:eu-west-1:123456789012:function:orders-hook:live",
}


def test_every_kinds_template_passes_cfn_lint_and_allows_only_sending(tmp_path: Path) -> None:
    paths = []
    for kind, target in TARGETS.items():
        template = role_template(
            kind=kind, target=target, external_id="hkl-abc",
            hookline_role_arn="arn:aws:iam::999999999999:role/deliver", name="acme",
            prefix="in/",
        )  # fmt: skip
        [statement] = template["Resources"]["HooklineDeliveryRole"]["Properties"]["Policies"][0][
            "PolicyDocument"
        ]["Statement"]
        assert statement["Action"] == SEND_ACTIONS[kind]
        if kind == "lambda":  # invoking that one function (version or alias), nothing else
            assert statement["Action"] == ["lambda:InvokeFunction"]
        assert statement["Resource"] == (f"{target}/in/*" if kind == "s3" else target)
        path = tmp_path / f"{kind}.json"
        path.write_text(json.dumps(template))
        paths.append(str(path))
    script = "import sys; from cfnlint.runner import main; sys.exit(main())"
    run = subprocess.run(
        [sys.executable, "-c", script, "--format", "json", *paths],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert json.loads(run.stdout or "[]") == [], run.stdout


def test_an_offloading_queue_may_also_write_under_its_bucket_prefix_only(tmp_path: Path) -> None:
    template = role_template(
        kind="sqs", target=TARGETS["sqs"], external_id="hkl-abc",
        hookline_role_arn="arn:aws:iam::999999999999:role/deliver", name="acme",
        prefix="large/", offload_bucket="acme-large",
    )  # fmt: skip
    statements = template["Resources"]["HooklineDeliveryRole"]["Properties"]["Policies"][0][
        "PolicyDocument"
    ]["Statement"]
    assert [(s["Action"], s["Resource"]) for s in statements] == [
        (SEND_ACTIONS["sqs"], TARGETS["sqs"]),
        (["s3:PutObject"], "arn:aws:s3:::acme-large/large/*"),
    ]
    path = tmp_path / "offload.json"
    path.write_text(json.dumps(template))
    script = "import sys; from cfnlint.runner import main; sys.exit(main())"
    run = subprocess.run(
        [sys.executable, "-c", script, "--format", "json", str(path)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert json.loads(run.stdout or "[]") == [], run.stdout
