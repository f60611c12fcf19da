"""A fresh account's deployment (decision 0063): no reserved concurrency (its quota is 10),
each tenant group still capped by its event source; existing Elastic IP allocations; alarms to
an existing SNS topic and to a chat webhook besides the e-mail."""

from __future__ import annotations

import pytest

from hookline.config import HooklineConfig
from tests.infra.view import StackView, synthesize

pytestmark = pytest.mark.infra

TOPIC = "arn:aws:sns:eu-west-1:123456789012:pager"
WEBHOOK = "https://hooks.slack.example/services/T000/B000/XXXX"
ALLOCATIONS = ["eipalloc-0aaaaaaaaaaaaaaa1", "eipalloc-0aaaaaaaaaaaaaaa2"]


@pytest.fixture(scope="module")
def fresh() -> StackView:
    config = HooklineConfig.from_dict(
        {
            "infrastructure": {
                "reserve_concurrency": False,
                "alarm_topic_arn": TOPIC,
                "alarm_chat_webhook_url": WEBHOOK,
                "nat_eip_allocation_ids": ALLOCATIONS,
            }
        }
    )
    view = synthesize({}, config=config)
    view.start_lint()
    return view


def test_no_function_reserves_concurrency_and_groups_keep_their_caps(fresh: StackView) -> None:
    for name, fn in fresh.functions().items():
        assert "ReservedConcurrentExecutions" not in fn["Properties"], name
    caps = {
        m["Properties"]["ScalingConfig"]["MaximumConcurrency"]
        for m in fresh.of_type("AWS::Lambda::EventSourceMapping").values()
    }
    assert caps == {g.max_concurrency for g in fresh.config.tenant_groups}


def test_the_default_reserves_each_groups_capacity(aws: StackView) -> None:
    deliver = [fn for k, fn in aws.functions().items() if k.startswith("Deliver")]
    assert sorted(fn["Properties"]["ReservedConcurrentExecutions"] for fn in deliver) == sorted(
        g.max_concurrency for g in aws.config.tenant_groups
    )


def test_existing_elastic_ip_allocations_are_used_not_made(fresh: StackView) -> None:
    assert fresh.of_type("AWS::EC2::EIP") == {}
    allocations = sorted(
        n["Properties"]["AllocationId"] for n in fresh.of_type("AWS::EC2::NatGateway").values()
    )
    assert allocations == ALLOCATIONS


def test_every_alarm_also_notifies_the_existing_topic(fresh: StackView) -> None:
    for name, alarm in fresh.of_type("AWS::CloudWatch::Alarm").items():
        assert TOPIC in alarm["Properties"]["AlarmActions"], name
        assert TOPIC in alarm["Properties"]["OKActions"], name


def test_a_chat_subscriber_posts_alarms_to_the_webhook(fresh: StackView) -> None:
    (subscription,) = [
        s["Properties"]
        for s in fresh.of_type("AWS::SNS::Subscription").values()
        if s["Properties"]["Protocol"] == "lambda"
    ]
    function_id = subscription["Endpoint"]["Fn::GetAtt"][0]
    chat = fresh.resources[function_id]["Properties"]
    assert chat["Environment"]["Variables"]["HOOKLINE_ALARM_WEBHOOK_URL"] == WEBHOOK
    assert "VpcConfig" not in chat  # it must work when the network is what broke
    assert "Layers" not in chat


def test_the_fresh_account_stack_passes_cfn_lint(fresh: StackView) -> None:
    problems = [
        f"{m['Rule']['Id']} {m['Message']}"
        for m in fresh.lint_matches()
        if m["Level"] == "Error" or m["Rule"]["Id"] != "W3005"
    ]
    assert problems == []
