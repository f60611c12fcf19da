"""EventBridge rules with schedule expressions: fan-out every minute (the safety net behind the
receiver's nudge) and reconcile every few minutes. Rules, not EventBridge Scheduler: rules fire
in LocalStack as well."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from hookline.config import HooklineConfig


class Schedules(Construct):
    """The two schedule rules and their Lambda targets."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: HooklineConfig,
        fanout: lambda_.IFunction,
        reconcile: lambda_.IFunction,
    ) -> None:
        super().__init__(scope, construct_id)
        self.fanout_rule = _every(
            self, "Fanout", config.schedules.fanout_minutes, fanout, "hookline fan-out sweep"
        )
        self.reconcile_rule = _every(
            self,
            "Reconcile",
            config.schedules.reconcile_minutes,
            reconcile,
            "hookline reconcile sweep",
        )


def _every(
    scope: Construct, rule_id: str, minutes: int, fn: lambda_.IFunction, description: str
) -> events.Rule:
    period = Duration.minutes(minutes)
    return events.Rule(
        scope,
        rule_id,
        description=description,
        schedule=events.Schedule.rate(period),
        # A tick that cannot run within its own period is superseded by the next one.
        targets=[
            targets.LambdaFunction(
                fn, retry_attempts=2, max_event_age=Duration.minutes(max(minutes, 1))
            )
        ],
    )
