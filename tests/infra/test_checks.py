"""cdk-nag (AWS Solutions) with no unacknowledged finding, and cfn-lint with no error."""

from __future__ import annotations

import pytest
from aws_cdk import Validations
from cdk_nag import AwsSolutionsChecks

from tests.infra.view import StackView

pytestmark = pytest.mark.infra


def test_cdk_nag_finds_nothing_unacknowledged(variant: StackView) -> None:
    report = AwsSolutionsChecks(variant.app).validate_scope(variant.stack)
    findings = [
        f"{v.rule_name}: {r.resource_logical_id or r.locations} — {v.description[:120]}"
        for v in report.violations
        for r in v.violating_resources
    ]
    assert findings == []
    assert report.success


def test_every_acknowledgment_gives_a_reason(variant: StackView) -> None:
    acknowledged: dict[str, str] = {}
    for construct in variant.stack.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == Validations.ACKNOWLEDGED_RULES_METADATA_KEY:
                acknowledged.update({k: v for k, v in entry.data.items() if "AwsSolutions-" in k})
    assert acknowledged, "expected acknowledged cdk-nag findings"
    for rule, reason in acknowledged.items():
        assert len(reason) > 40, f"{rule}: reason too thin: {reason!r}"


def test_cfn_lint_reports_no_error(variant: StackView) -> None:
    matches = variant.lint_matches()
    errors = [f"{m['Rule']['Id']} {m['Message']}" for m in matches if m["Level"] == "Error"]
    assert errors == []


def test_cfn_lint_warnings_are_only_cdks_redundant_depends_on(variant: StackView) -> None:
    # W3005: CDK adds DependsOn on a role a function already references with GetAtt.
    other = [
        f"{m['Rule']['Id']} {m['Message']}"
        for m in variant.lint_matches()
        if m["Level"] != "Error" and m["Rule"]["Id"] != "W3005"
    ]
    assert other == []
