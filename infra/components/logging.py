"""Log retention from the config, as the nearest CloudWatch Logs retention period, and the
log groups of the functions CDK adds itself (issue 25)."""

from __future__ import annotations

from aws_cdk import CfnResource, RemovalPolicy, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs

_PERIODS: tuple[tuple[int, logs.RetentionDays], ...] = (
    (1, logs.RetentionDays.ONE_DAY),
    (3, logs.RetentionDays.THREE_DAYS),
    (5, logs.RetentionDays.FIVE_DAYS),
    (7, logs.RetentionDays.ONE_WEEK),
    (14, logs.RetentionDays.TWO_WEEKS),
    (30, logs.RetentionDays.ONE_MONTH),
    (60, logs.RetentionDays.TWO_MONTHS),
    (90, logs.RetentionDays.THREE_MONTHS),
    (180, logs.RetentionDays.SIX_MONTHS),
    (365, logs.RetentionDays.ONE_YEAR),
    (731, logs.RetentionDays.TWO_YEARS),
    (1827, logs.RetentionDays.FIVE_YEARS),
    (3653, logs.RetentionDays.TEN_YEARS),
)


def retention(days: int) -> logs.RetentionDays:
    """The smallest CloudWatch retention period that keeps logs at least `days` days."""
    for period, value in _PERIODS:
        if period >= days:
            return value
    return _PERIODS[-1][1]


def retain_provider_logs(stack: Stack, days: int) -> list[logs.LogGroup]:
    """Give every function CDK adds on its own (custom resource providers: the default
    security group's, triggers', log retention's) a log group of ours with `days` of retention.

    Left alone, Lambda creates `/aws/lambda/<name>` at the first run, which never expires and
    outlives the stack. Pointing the function's `LoggingConfig` at a log group of the stack
    creates the group before the function exists, so no run can race it. Call it last, once
    every construct has been added."""
    made: list[logs.LogGroup] = []
    for construct in stack.node.find_all():
        if not isinstance(construct, CfnResource) or isinstance(construct, lambda_.CfnFunction):
            continue  # a Function's CfnFunction: its construct set (or left) its logging
        if construct.cfn_resource_type != "AWS::Lambda::Function":
            continue
        scope = construct.node.scope
        assert scope is not None
        group = logs.LogGroup(
            scope, "ProviderLogs", retention=retention(days), removal_policy=RemovalPolicy.DESTROY
        )
        construct.add_property_override("LoggingConfig", {"LogGroup": group.log_group_name})
        made.append(group)
    return made
