"""Per tenant group: queue + DLQ, redrive, visibility, SSE, and the deliver function's event
source (batch size, partial batch failures, MaximumConcurrency = cap, reserved >= cap)."""

from __future__ import annotations

import pytest

from hookline.config import TenantGroup
from tests.infra.view import StackView, env_of

pytestmark = pytest.mark.infra


def _queue(view: StackView, name: str) -> tuple[str, dict]:  # type: ignore[type-arg]
    found = [
        (k, v)
        for k, v in view.of_type("AWS::SQS::Queue").items()
        if v["Properties"].get("QueueName") == name
    ]
    assert len(found) == 1, name
    return found[0]


def _deliver(view: StackView, group: TenantGroup) -> tuple[str, dict]:  # type: ignore[type-arg]
    found = [
        (k, v)
        for k, v in view.functions().items()
        if env_of(v).get("HOOKLINE_TENANT_GROUP") == group.name
    ]
    assert len(found) == 1, group.name
    return found[0]


def test_one_queue_dlq_and_deliver_function_per_group(variant: StackView) -> None:
    groups = variant.config.tenant_groups
    variant.template.resource_count_is("AWS::SQS::Queue", 2 * len(groups))
    variant.template.resource_count_is("AWS::Lambda::EventSourceMapping", len(groups))
    for group in groups:
        _queue(variant, group.queue_name)
        _queue(variant, group.dlq_name)
        _deliver(variant, group)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_redrive_visibility_and_encryption(aws: StackView, index: int) -> None:
    group = aws.config.tenant_groups[index]
    _, queue = _queue(aws, group.queue_name)
    dlq_id, dlq = _queue(aws, group.dlq_name)
    props = queue["Properties"]
    assert props["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": [dlq_id, "Arn"]},
        "maxReceiveCount": group.max_receive_count,
    }
    assert props["VisibilityTimeout"] >= 6 * aws.config.deliver_function_timeout_seconds
    assert props["SqsManagedSseEnabled"] is True
    assert dlq["Properties"]["SqsManagedSseEnabled"] is True
    assert dlq["Properties"]["MessageRetentionPeriod"] == 14 * 24 * 3600


def test_queues_refuse_plain_http(aws: StackView) -> None:
    policies = aws.of_type("AWS::SQS::QueuePolicy").values()
    denies = [
        s
        for p in policies
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    ]
    assert len(denies) == len(aws.of_type("AWS::SQS::Queue"))


@pytest.mark.parametrize("index", [0, 1, 2])
def test_event_source_and_reserved_concurrency(aws: StackView, index: int) -> None:
    group = aws.config.tenant_groups[index]
    queue_id, _ = _queue(aws, group.queue_name)
    fn_id, fn = _deliver(aws, group)
    (mapping,) = [
        m["Properties"]
        for m in aws.of_type("AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": fn_id}
    ]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": [queue_id, "Arn"]}
    assert mapping["BatchSize"] == group.batch_size
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": group.max_concurrency}
    assert fn["Properties"]["ReservedConcurrentExecutions"] >= group.max_concurrency
    assert fn["Properties"]["Timeout"] == aws.config.deliver_function_timeout_seconds


def test_a_group_the_event_source_would_reject_is_refused_before_deploy() -> None:
    from hookline.config import HooklineConfig
    from tests.infra.view import synthesize

    config = HooklineConfig(tenant_groups=(TenantGroup("solo", max_concurrency=1),))
    with pytest.raises(Exception, match=r"max_concurrency must be 2\.\.1000"):
        synthesize({"localstack": "true"}, config=config)
