"""Two stacks (staging and production) deploy side by side in one account and region: no
physical name of one is the name of a resource of the other."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infra.view import StackView, synthesize

pytestmark = pytest.mark.infra

# Properties that name a resource account- or region-wide.
NAME_KEYS = {
    "QueueName", "FunctionName", "RoleName", "LogGroupName", "TopicName", "Name",
    "DashboardName", "AlarmName", "DBProxyName", "DBInstanceIdentifier", "RuleName",
    "TableName", "BucketName", "ScheduleName", "ApiName", "StateMachineName", "SecretName",
}  # fmt: skip


def physical_names(view: StackView) -> set[tuple[str, str]]:
    """(resource type, name) of every literal physical name in the template: a name property
    of a resource (or of the sampling rule it holds), not the names inside it (an alarm's
    dimensions, a web ACL's rules)."""
    found: set[tuple[str, str]] = set()
    for resource in view.resources.values():
        properties: dict[str, Any] = resource.get("Properties", {})
        for holder in (properties, properties.get("SamplingRule") or {}):
            for key, value in holder.items():
                if key in NAME_KEYS and isinstance(value, str):
                    found.add((resource["Type"], value))
    return found


@pytest.fixture(scope="module")
def staging() -> StackView:
    return synthesize({"stackName": "HooklineStaging"})


def test_two_stacks_share_no_physical_name(aws: StackView, staging: StackView) -> None:
    production, other = physical_names(aws), physical_names(staging)
    assert any(t == "AWS::SQS::Queue" for t, _ in production)  # the queues are named
    assert production & other == set()


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
