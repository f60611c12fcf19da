"""What the reconcile function needs to tell people about endpoints (docs/decisions/0068):
the operator's subscriptions in its environment, and permission to send e-mail through SES as
the configured sender, and as nobody else."""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from hookline.config import HooklineConfig


class OperationalNotifications(Construct):
    """The operator's subscriptions and the SES permission, on the reconcile function."""

    def __init__(
        self, scope: Construct, construct_id: str, *, config: HooklineConfig,
        reconcile: lambda_.Function,
    ) -> None:  # fmt: skip
        super().__init__(scope, construct_id)
        infra = config.infrastructure
        for name, value in (
            ("HOOKLINE_OPERATOR_TENANT", infra.operator_tenant),
            ("HOOKLINE_OPERATOR_EMAILS", infra.operator_emails),
            ("HOOKLINE_OPERATOR_CHAT_URL", infra.operator_chat_url),
            ("HOOKLINE_NOTIFY_FROM", infra.notify_from),
        ):
            if value:
                reconcile.add_environment(name, value)
        if not infra.notify_from:
            return
        # SES authorises a send by the identity: the address itself or its domain.
        domain = infra.notify_from.rpartition("@")[2]
        stack = Stack.of(self)
        identities = [
            stack.format_arn(service="ses", resource="identity", resource_name=name)
            for name in dict.fromkeys([infra.notify_from, domain])
        ]
        reconcile.add_to_role_policy(
            iam.PolicyStatement(
                actions=["ses:SendEmail", "ses:SendRawEmail"],
                resources=identities,
                conditions={"StringEquals": {"ses:FromAddress": infra.notify_from}},
            )
        )
