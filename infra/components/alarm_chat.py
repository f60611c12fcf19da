"""The alarm topic's chat subscriber (decision 0063): a small function that posts each alarm to
a chat incoming webhook (`infrastructure.alarm_chat_webhook_url`). Chat webhooks do not confirm
SNS HTTPS subscriptions, and AWS Chatbot needs a console sign-in to the chat workspace first;
a function works with any webhook, unattended."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from hookline.config import HooklineConfig
from infra.components.logging import retention
from infra.nag import suppress
from infra.paths import function_dir


class AlarmChat(Construct):
    """The subscriber function, its log group and its subscription to the alarm topic."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: HooklineConfig,
        topic: sns.ITopic,
        webhook_url: str,
    ) -> None:
        super().__init__(scope, construct_id)
        self.log_group = logs.LogGroup(
            self,
            "Logs",
            retention=retention(config.log_retention_days),
            removal_policy=RemovalPolicy.DESTROY,
        )
        role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="hookline alarm chat: its log group only",
        )
        self.log_group.grant_write(role)
        self.function = lambda_.Function(
            self,
            "Function",
            description="Posts alarm notifications to the chat webhook",
            runtime=lambda_.Runtime(
                f"python{config.infrastructure.python_version}", lambda_.RuntimeFamily.PYTHON
            ),
            architecture=lambda_.Architecture.ARM_64,
            handler="handler.lambda_handler",
            code=lambda_.Code.from_asset(
                str(function_dir("alarm_chat")), exclude=["__pycache__", "*.pyc"]
            ),
            memory_size=128,
            timeout=Duration.seconds(30),
            environment={"HOOKLINE_ALARM_WEBHOOK_URL": webhook_url},
            role=role,
            log_group=self.log_group,
            logging_format=lambda_.LoggingFormat.JSON,
        )
        topic.add_subscription(subscriptions.LambdaSubscription(self.function))
        suppress(
            self.function,
            "AwsSolutions-L1",
            "The runtime is the configured infrastructure.python_version, as every function's.",
        )
