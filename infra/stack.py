"""The Hookline stack: composes the constructs in components/ and names the outputs."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import (
    Aws,
    CfnOutput,
    CfnRule,
    CfnRuleAssertion,
    Fn,
    RemovalPolicy,
    Stack,
)
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_xray as xray
from constructs import Construct

from hookline.config import HooklineConfig, supported_regions
from infra.components.api import Api
from infra.components.archive import LedgerArchive
from infra.components.console import ConsoleFunction, OperatorSignIn, SessionKey
from infra.components.database import Database, DatabaseAccess, ExternalDatabase
from infra.components.delivery import DeliverFunctions
from infra.components.functions import FunctionContext, ServiceFunctions
from infra.components.ingress import FunctionUrlIngress, HttpIngress
from infra.components.layer import CoreLayer
from infra.components.logging import retain_provider_logs
from infra.components.migrations import Migrations
from infra.components.monitoring import Monitored, Monitoring
from infra.components.network import Network
from infra.components.notifications import OperationalNotifications
from infra.components.queues import GroupQueues
from infra.components.schedules import Schedules


@dataclass(frozen=True)
class Variant:
    """AWS (default) or LocalStack: no VPC, RDS, proxy or WAF; an external database URL."""

    localstack: bool = False
    database_url_secret_name: str = "hookline/database-url"  # noqa: S105 - a name, not a secret


class HooklineStack(Stack):
    """Everything `cdk deploy` creates for one Hookline deployment."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: HooklineConfig,
        variant: Variant | None = None,
        **kwargs: object,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)  # type: ignore[arg-type]
        variant = variant or Variant()
        network: Network | None = None
        rds: Database | None = None
        database: DatabaseAccess
        if variant.localstack:
            database = ExternalDatabase(
                self, "Database", secret_name=variant.database_url_secret_name
            )
        else:
            network = Network(self, "Network", config=config)
            rds = Database(self, "Database", config=config, network=network)
            database = rds

        secrets_key = kms.Key(
            self,
            "SecretsKey",
            description="Hookline: wraps the data key of source and endpoint secrets",
            enable_key_rotation=True,
            # Losing it loses every stored secret (a failed first create removes it).
            removal_policy=RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
        )
        ctx = FunctionContext(
            config=config,
            layer=CoreLayer(self, "CoreLayer", config=config),
            database=database,
            network=network,
            secrets_key=secrets_key,
        )
        queues = GroupQueues(self, "Queues", config=config)
        services = ServiceFunctions(self, "Services", ctx=ctx, queues=queues)
        deliver = DeliverFunctions(self, "Deliver", ctx=ctx, queues=queues)
        archive = LedgerArchive(self, "Archive", config=config)
        for function in (services.reconcile, services.replay, services.management):
            archive.grant_to(function)
        migrations = Migrations(self, "Migrations", ctx=ctx)
        session_key = SessionKey(self, "SessionKey", config=config)
        session_key.grant_to(services.management)  # portal links made through the API
        console = ConsoleFunction(self, "Console", ctx=ctx, queues=queues, services=services)
        session_key.grant_to(console.function)
        api = self._front(config, services, console.function, waf=not variant.localstack)
        console_base = api.console_base
        signin: OperatorSignIn | None = None
        # Cognito is not in LocalStack's free tier: there, the portal only.
        if not variant.localstack:
            signin = OperatorSignIn(
                self, "OperatorSignIn", config=config, console_base=console_base
            )
            # Behind a function URL the client names the function's URL: the function reads
            # the client's id from a parameter (decision 0053).
            signin.configure(
                console.function,
                client_id_parameter=config.infrastructure.ingress == "function_url",
            )
        Schedules(
            self, "Schedules", config=config, fanout=services.fanout, reconcile=services.reconcile
        )
        OperationalNotifications(self, "Notifications", config=config, reconcile=services.reconcile)
        if rds is not None:
            migrations.run_after(rds.instance)
        migrations.run_before(services, deliver, api, console)

        monitoring = Monitoring(
            self,
            "Monitoring",
            config=config,
            target=Monitored(
                queues=queues,
                deliver=deliver.by_group,
                functions={
                    "receiver": services.receiver,
                    "api": services.management,
                    "fanout": services.fanout,
                    "reconcile": services.reconcile,
                    "replay": services.replay,
                    "migrate": migrations.migrate,
                    "console": console.function,
                },
                front=api.metrics,
                database=rds,
            ),
        )
        xray.CfnSamplingRule(
            self,
            "TraceSampling",
            sampling_rule=xray.CfnSamplingRule.SamplingRuleProperty(
                rule_name=f"{self.stack_name}"[:32],
                priority=100,
                fixed_rate=config.infrastructure.xray_sampling_rate,
                reservoir_size=1,
                # Lambda names a function's trace segments after the function, and every
                # function of this stack is named "<stack>-…": this stack's services only,
                # not every traced service of the account.
                service_name=f"{self.stack_name}-*",
                service_type="*",
                host="*",
                http_method="*",
                url_path="*",
                resource_arn="*",
                version=1,
            ),
        )

        self._refuse_unsupported_regions(config)

        CfnOutput(self, "ApiUrl", value=api.url, description="Base URL of the API")
        CfnOutput(
            self,
            "InboundUrl",
            value=api.inbound_url,
            description="Providers POST to <this>/<source_id>",
        )
        CfnOutput(
            self,
            "ManagementApiArn",
            value=api.management_arn,
            description="Grant execute-api:Invoke on this (plus /<method>/v1/*), or with "
            "function URLs lambda:InvokeFunctionUrl and lambda:InvokeFunction on this "
            "function, to API callers",
        )
        CfnOutput(
            self,
            "ConsoleUrl",
            value=f"{console_base}/console",
            description="The operator console (operators sign in through Cognito)",
        )
        CfnOutput(
            self,
            "PortalSessionKeySecretArn",
            value=session_key.secret.secret_arn,
            description="Signs portal links, console and portal sessions (rotate: docs/console.md)",
        )
        if signin is not None:
            CfnOutput(self, "OperatorUserPoolId", value=signin.pool.user_pool_id)
            CfnOutput(self, "OperatorSignInUrl", value=signin.hosted_ui)
        CfnOutput(self, "FanoutFunctionName", value=services.fanout.function_name)
        CfnOutput(self, "ReplayFunctionName", value=services.replay.function_name)
        CfnOutput(self, "AlarmTopicArn", value=monitoring.topic.topic_arn)
        CfnOutput(self, "DashboardName", value=self.stack_name)
        for name, group_queue in queues.by_group.items():
            CfnOutput(self, f"QueueUrl{name.title()}", value=group_queue.queue.queue_url)
            CfnOutput(self, f"DlqUrl{name.title()}", value=group_queue.dlq.queue_url)
        if network is not None and rds is not None:
            CfnOutput(
                self,
                "DeliveryEgressIps",
                value=network.egress_addresses,
                description="Static source addresses of deliveries (NAT gateway Elastic IPs)",
            )
            CfnOutput(self, "DatabaseProxyEndpoint", value=rds.proxy.endpoint)
            CfnOutput(self, "DatabaseSecretArn", value=rds.secret.secret_arn)
        if rds is not None:
            # Last: deletion protection once everything else exists (decision 0063).
            rds.protect_after(
                config,
                [c for c in self.node.children if not isinstance(c, (CfnOutput, CfnRule))],
            )
        # Last of all: the functions CDK added above get log groups that expire (issue 25).
        retain_provider_logs(self, config.log_retention_days)

    def _refuse_unsupported_regions(self, config: HooklineConfig) -> None:
        """CloudFormation refuses the template, before creating anything, in a region that
        lacks a service or resource type the stack uses (docs/operations.md, "Regions")."""
        regions = supported_regions(config)
        CfnRule(
            self,
            "SupportedRegion",
            assertions=[
                CfnRuleAssertion(
                    assert_=Fn.condition_contains(list(regions), Aws.REGION),
                    assert_description="Hookline does not deploy to this region (a service "
                    "it uses is missing there); supported: " + ", ".join(regions),
                )
            ],
        )

    def _front(
        self,
        config: HooklineConfig,
        services: ServiceFunctions,
        console: lambda_.Function,
        *,
        waf: bool,
    ) -> Api | HttpIngress | FunctionUrlIngress:
        """The front door `infrastructure.ingress` chose (docs/decisions/0035)."""
        ingress = config.infrastructure.ingress
        if ingress == "http":
            return HttpIngress(
                self,
                "Api",
                config=config,
                receiver=services.receiver,
                management=services.management,
                console=console,
            )
        if ingress == "function_url":
            return FunctionUrlIngress(
                self,
                "Api",
                receiver=services.receiver,
                management=services.management,
                console=console,
            )
        return Api(
            self,
            "Api",
            config=config,
            receiver=services.receiver,
            management=services.management,
            waf=config.infrastructure.waf_enabled and waf,
            console=console,
        )
