"""Least privilege: each role may touch only its own log group, queues, secret and function;
'*' appears only for actions that accept no resource ARN."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.infra.view import StackView, actions_of, env_of, resources_of

pytestmark = pytest.mark.infra

# Actions without resource-level permissions (IAM service authorization reference).
WILDCARD_ONLY = {
    "ec2:CreateNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeSubnets",
    "ec2:DeleteNetworkInterface",
    "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses",
    "xray:PutTraceSegments",
    "xray:PutTelemetryRecords",
}


def _statements(view: StackView, fragment: str) -> list[dict[str, Any]]:
    fn_id, _ = view.function(fragment)
    return view.policy_statements(view.role_of(fn_id))


def _targets(view: StackView, fragment: str, action: str) -> set[str]:
    """Logical ids of the resources `action` is allowed on for the function `fragment`."""
    found: set[str] = set()
    for statement in _statements(view, fragment):
        if action in actions_of(statement):
            for resource in resources_of(statement):
                if isinstance(resource, dict) and "Fn::GetAtt" in resource:
                    found.add(resource["Fn::GetAtt"][0])
                elif isinstance(resource, dict) and "Ref" in resource:
                    found.add(resource["Ref"])
    return found


def _queue_id(view: StackView, name: str) -> str:
    (found,) = [
        k
        for k, v in view.of_type("AWS::SQS::Queue").items()
        if v["Properties"]["QueueName"] == name
    ]
    return found


def test_no_wildcard_resource_where_an_arn_exists(variant: StackView) -> None:
    for name in variant.functions():
        for statement in variant.policy_statements(variant.role_of(name)):
            if "*" in resources_of(statement):
                assert set(actions_of(statement)) <= WILDCARD_ONLY, (name, statement)
            assert not any(a.endswith(":*") or a == "*" for a in actions_of(statement)), name


def test_roles_have_no_managed_policies(variant: StackView) -> None:
    for name in variant.functions():
        role = variant.resources[variant.role_of(name)]
        assert "ManagedPolicyArns" not in role["Properties"], name


def test_each_function_writes_only_its_own_log_group(variant: StackView) -> None:
    for name, fn in variant.functions().items():
        own = fn["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert _targets(variant, name, "logs:PutLogEvents") == {own}, name


def test_deliver_touches_only_its_own_queue(variant: StackView) -> None:
    for group in variant.config.tenant_groups:
        fragment = f"Deliver{group.name}"
        queue = _queue_id(variant, group.queue_name)
        assert _targets(variant, fragment, "sqs:ReceiveMessage") == {queue}
        assert _targets(variant, fragment, "sqs:SendMessage") == {queue}


def test_fanout_reconcile_and_the_receiver_send_to_every_group_queue_only(
    variant: StackView,
) -> None:
    # The receiver sends an event's deliveries itself (fan-out at receipt, decision 0076)
    queues = {_queue_id(variant, g.queue_name) for g in variant.config.tenant_groups}
    for fragment in ("Fanout", "Reconcile", "Receiver"):
        assert _targets(variant, fragment, "sqs:SendMessage") == queues
        assert _targets(variant, fragment, "sqs:ReceiveMessage") == set()


def test_replay_reaches_every_queue_and_redrives_every_dlq(variant: StackView) -> None:
    groups = variant.config.tenant_groups
    queues = {_queue_id(variant, g.queue_name) for g in groups}
    dlqs = {_queue_id(variant, g.dlq_name) for g in groups}
    assert _targets(variant, "Replay", "sqs:SendMessage") == queues | dlqs
    assert _targets(variant, "Replay", "sqs:ReceiveMessage") == dlqs
    assert _targets(variant, "Replay", "sqs:StartMessageMoveTask") == dlqs


def test_only_the_receiver_and_the_api_may_invoke_fanout_and_the_api_reconcile_and_replay_replay(
    variant: StackView,
) -> None:
    fanout, _ = variant.function("Fanout")
    replay, _ = variant.function("Replay")
    for name in variant.functions():
        allowed = _targets(variant, name, "lambda:InvokeFunction")
        # The console's actions are the API's (resend, test events, replays): its grants too
        if "Management" in name or "ConsoleFunction" in name:
            assert allowed == {fanout, replay}, name
        elif "Reconcile" in name or name == replay:  # a lost continuation; the next run
            assert allowed == {replay}, name
        elif "Receiver" in name:
            assert allowed == {fanout}, name
        else:
            assert allowed == set(), name


def test_the_api_sends_resends_to_every_group_queue_only(variant: StackView) -> None:
    queues = {_queue_id(variant, g.queue_name) for g in variant.config.tenant_groups}
    assert _targets(variant, "Management", "sqs:SendMessage") == queues
    assert _targets(variant, "Management", "sqs:ReceiveMessage") == set()


def test_only_migrate_reads_the_database_secret_the_others_connect_with_iam(
    aws: StackView,
) -> None:
    # The secret RDS manages (decision 0062), named by the instance's MasterUserSecret.
    attachment = aws.logical_id("DatabaseInstance", "AWS::RDS::DBInstance")
    for name in aws.functions():
        secret_reads = _targets(aws, name, "secretsmanager:GetSecretValue")
        connects = [s for s in _statements(aws, name) if "rds-db:connect" in actions_of(s)]
        if "Migrate" in name:
            assert secret_reads == {attachment} and connects == [], name
        else:
            assert attachment not in secret_reads and len(connects) == 1, name
            (resource,) = resources_of(connects[0])
            assert ":dbuser:" in json.dumps(resource) and "/hookline" in json.dumps(resource)


def _catchup_reader(view: StackView) -> tuple[str, dict[str, Any]]:
    (found,) = [
        (k, v) for k, v in view.of_type("AWS::IAM::Role").items() if "CatchupSecretReader" in k
    ]
    return found


def test_reconcile_reads_catch_up_secrets_only_as_the_sources_tenant(variant: StackView) -> None:
    # Given the stack: the reconcile role and the catch-up secret reader role
    reconcile_role = variant.role_of(variant.function("Reconcile")[0])
    reader_id, reader = _catchup_reader(variant)
    # Then no function role may read a catch-up secret itself
    for name in variant.functions():
        for statement in variant.policy_statements(variant.role_of(name)):
            if "secretsmanager:GetSecretValue" in actions_of(statement):
                assert "hookline/catchup" not in json.dumps(resources_of(statement)), name
    # And reconcile alone may assume the reader, passing session tags, and nothing else
    # (the deliverers' customer roles are another test's)
    assumers = {
        name
        for name in variant.functions()
        for s in variant.policy_statements(variant.role_of(name))
        if {"sts:AssumeRole", "sts:TagSession"} & set(actions_of(s))
        and "hookline-delivery-" not in json.dumps(resources_of(s))
    }
    assert assumers == {variant.function("Reconcile")[0]}
    [assume] = [
        s for s in variant.policy_statements(reconcile_role) if "sts:AssumeRole" in actions_of(s)
    ]
    assert set(actions_of(assume)) == {"sts:AssumeRole", "sts:TagSession"}
    assert resources_of(assume) == [{"Fn::GetAtt": [reader_id, "Arn"]}]
    # And the reader trusts only the reconcile role, only with a tenant_id tag and no other
    [trust] = reader["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert set(actions_of(trust)) == {"sts:AssumeRole", "sts:TagSession"}
    assert trust["Principal"] == {"AWS": {"Fn::GetAtt": [reconcile_role, "Arn"]}}
    assert trust["Condition"] == {
        "StringLike": {"aws:RequestTag/tenant_id": "?*"},
        "ForAllValues:StringEquals": {"aws:TagKeys": ["tenant_id"]},
    }
    # And the reader reads only the prefix named by the session's own tenant tag
    [read] = variant.policy_statements(reader_id)
    assert actions_of(read) == ["secretsmanager:GetSecretValue"]
    [resource] = resources_of(read)
    text = json.dumps(resource)
    assert text.endswith(':secret:hookline/catchup/${aws:PrincipalTag/tenant_id}/*"]]}'), text
    # And reconcile is told which role that is
    env = env_of(variant.function("Reconcile")[1])
    assert env["HOOKLINE_CATCHUP_SECRET_ROLE_ARN"] == {"Fn::GetAtt": [reader_id, "Arn"]}


def test_the_stack_and_the_code_agree_on_the_catch_up_secret_prefix_and_tag() -> None:
    from hookline.catchup.base import SECRET_PREFIX
    from hookline.catchup.secrets import TENANT_TAG
    from infra.components import catchup_secrets

    assert catchup_secrets.CATCHUP_SECRET_PREFIX == SECRET_PREFIX
    assert catchup_secrets.TENANT_TAG == TENANT_TAG


def test_deliver_assumes_only_customer_delivery_roles_with_an_external_id(
    variant: StackView,
) -> None:
    # AWS destinations (decision 0046): any account, but only roles named hookline-delivery-*
    for group in variant.config.tenant_groups:
        statements = [
            s for s in _statements(variant, f"Deliver{group.name}")
            if "sts:AssumeRole" in actions_of(s)
        ]  # fmt: skip
        [statement] = statements
        assert json.dumps(resources_of(statement)).endswith(':role/hookline-delivery-*"]]}]')
        assert statement["Condition"] == {"StringLike": {"sts:ExternalId": "hkl-*"}}
    # And no other function may assume a customer's role
    for name in variant.functions():
        if "Deliver" not in name:
            assert not any(
                "hookline-delivery-" in json.dumps(resources_of(s))
                for s in variant.policy_statements(variant.role_of(name))
            ), name
