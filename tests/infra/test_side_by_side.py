"""Two stacks (staging and production) deploy side by side in one account and region: no
account- or region-unique name of one, at any depth of any resource, is a name of the other,
and neither reads or alarms on the other's metrics."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.infra.view import StackView, synthesize

pytestmark = pytest.mark.infra

# Subtrees whose names are scoped to their resource, not to the account: a web ACL's rules, a
# Glue table's columns, an alarm's dimensions (they name what is watched), tags, policies.
SCOPED = {
    "Rules", "Columns", "PartitionKeys", "Dimensions", "Tags", "PolicyDocument",
    "AssumeRolePolicyDocument", "Environment", "Metrics", "DashboardBody", "RuleBody",
    "SubnetIds", "SecurityGroupIds", "TableInput",
}  # fmt: skip
# Property names that never name an account-unique thing.
NOT_A_NAME = {"MetricName", "AttributeName", "KeyName", "ParameterName", "EngineFamily"}
# Names unique only within their parent: a role's or policy's inline policy, a pool's group,
# schema attribute and client, an API's stage, the instance's database, a proxy's target group.
SCOPED_NAMES = {
    "AWS::IAM::Policy.PolicyName", "AWS::IAM::Role.Policies.PolicyName",
    "AWS::Cognito::UserPool.AccountRecoverySetting.RecoveryMechanisms.Name",
    "AWS::Cognito::UserPool.Schema.Name", "AWS::Cognito::UserPoolGroup.GroupName",
    "AWS::Cognito::UserPoolClient.ClientName", "AWS::ApiGateway::Stage.StageName",
    "AWS::RDS::DBInstance.DBName", "AWS::RDS::DBProxyTargetGroup.TargetGroupName",
}  # fmt: skip


def names(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(property path, literal) of every string under a `...Name` key, at any depth."""
    if isinstance(value, dict):
        for key, child in value.items():
            if key in SCOPED:
                continue
            child_path = f"{path}.{key}"
            if isinstance(child, str) and key.endswith("Name") and key not in NOT_A_NAME:
                yield child_path, child
            else:
                yield from names(child, child_path)
    elif isinstance(value, list):
        for child in value:
            yield from names(child, path)


def physical_names(view: StackView) -> set[tuple[str, str]]:
    """(resource type + property path, name) of every literal name in the template."""
    found = {
        (f"{resource['Type']}{path}", name)
        for resource in view.resources.values()
        for path, name in names(resource.get("Properties", {}))
    }
    return {(kind, name) for kind, name in found if kind not in SCOPED_NAMES}


@pytest.fixture(scope="module")
def staging() -> StackView:
    return synthesize({"stackName": "HooklineStaging"})


def test_two_stacks_share_no_account_unique_name_at_any_depth(
    aws: StackView, staging: StackView
) -> None:
    production, other = physical_names(aws), physical_names(staging)
    # The walk reaches nested names: the Glue database inside DatabaseInput, the sampling
    # rule's RuleName inside SamplingRule
    kinds = {kind for kind, _ in production}
    assert "AWS::Glue::Database.DatabaseInput.Name" in kinds
    assert "AWS::XRay::SamplingRule.SamplingRule.RuleName" in kinds
    assert any(t == "AWS::SQS::Queue.QueueName" for t, _ in production)
    shared = {name for _, name in production} & {name for _, name in other}
    assert shared == set()


def test_two_stacks_share_no_metric_namespace(aws: StackView, staging: StackView) -> None:
    def namespaces(view: StackView) -> set[str]:
        return {
            fn["Properties"]["Environment"]["Variables"]["POWERTOOLS_METRICS_NAMESPACE"]
            for fn in view.functions().values()
        }

    assert namespaces(aws) == {"Hookline"}
    assert namespaces(staging) == {"HooklineStaging"}
    # and the staging alarms read staging's metrics only
    expressions = [
        metric["Expression"]
        for alarm in staging.of_type("AWS::CloudWatch::Alarm").values()
        for metric in alarm["Properties"].get("Metrics", [])
        if "SELECT" in metric.get("Expression", "")
    ]
    assert expressions
    assert all(e.endswith("FROM HooklineStaging") for e in expressions)


def test_the_functions_find_their_own_stacks_queues(aws: StackView, staging: StackView) -> None:
    for view, prefix in ((aws, "hookline"), (staging, "hooklinestaging")):
        queues = {
            p["QueueName"]
            for p in (r["Properties"] for r in view.of_type("AWS::SQS::Queue").values())
        }
        assert f"{prefix}-deliver-standard" in queues
        for name, fn in view.functions().items():
            env = fn["Properties"]["Environment"]["Variables"]
            assert env["HOOKLINE_RESOURCE_PREFIX"] == prefix, name


def test_trace_sampling_matches_this_stacks_functions_only(staging: StackView) -> None:
    (rule,) = staging.of_type("AWS::XRay::SamplingRule").values()
    assert rule["Properties"]["SamplingRule"]["ServiceName"] == "HooklineStaging-*"
