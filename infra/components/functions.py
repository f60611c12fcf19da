"""The Lambda functions: one shape (arm64, the core layer, X-Ray, JSON logs with retention, an
own least-privilege role) and the wiring of each function to what it may touch."""

from __future__ import annotations

from dataclasses import dataclass, field

from aws_cdk import Duration, Fn, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from hookline.config import HooklineConfig
from infra.components.catchup_secrets import CatchupSecretReader
from infra.components.database import DatabaseAccess
from infra.components.layer import CONFIG_PATH_IN_LAYER, CoreLayer
from infra.components.logging import retention
from infra.components.network import Network
from infra.components.queues import GroupQueues, metrics_namespace, resource_prefix
from infra.components.tracing import collector_layers, tracing_environment
from infra.nag import suppress
from infra.paths import function_dir

API_GATEWAY_TIMEOUT_SECONDS = 29  # the REST API's integration timeout
QUEUE_URL_PREFIX = Fn.sub("https://sqs.${AWS::Region}.${AWS::URLSuffix}/${AWS::AccountId}/")

# Lambda's VPC networking (ENIs) and X-Ray segment upload accept no resource ARNs.
_ENI_ACTIONS = [
    "ec2:CreateNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeSubnets",
    "ec2:DeleteNetworkInterface",
    "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses",
]
WILDCARD_REASON = (
    "Resource '*' only for actions without resource-level permissions: Lambda VPC ENI "
    "management (ec2:*NetworkInterface*, DescribeSubnets) and X-Ray PutTraceSegments/"
    "PutTelemetryRecords."
)


@dataclass(frozen=True)
class FunctionSpec:
    """How to build one function: its code folder, size and extra environment."""

    name: str  # folder under functions/, also the Powertools service suffix
    description: str
    memory_mb: int
    timeout_seconds: int
    environment: dict[str, str] = field(default_factory=dict)
    reserved_concurrency: int | None = None
    direct_database: bool = False  # bypass the proxy (migrations)
    # Deliver sends deferrals and short retries to its own queue on purpose (decision 0034).
    allow_recursive_loop: bool = False


@dataclass(frozen=True)
class FunctionContext:
    """What every function shares: config, layer, optional VPC and the database access."""

    config: HooklineConfig
    layer: CoreLayer
    database: DatabaseAccess
    network: Network | None = None
    # Wraps the data key of the secrets at rest (docs/decisions/0013); every function may read
    # a sealed secret (receiver, deliver, API, catch-up), so every function may use it.
    secrets_key: kms.IKey | None = None


class HooklineFunction(Construct):
    """One Lambda function in the house shape, with its own log group and role."""

    def __init__(
        self, scope: Construct, construct_id: str, *, spec: FunctionSpec, ctx: FunctionContext
    ) -> None:
        super().__init__(scope, construct_id)
        config = ctx.config
        self.log_group = logs.LogGroup(
            self,
            "Logs",
            retention=retention(config.log_retention_days),
            removal_policy=(
                RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE
                if config.infrastructure.deletion_protection
                else RemovalPolicy.DESTROY
            ),
        )
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"hookline {spec.name}: its log group, queues, secret and database",
        )
        self.log_group.grant_write(self.role)
        network = ctx.network
        if network is not None:
            self.role.add_to_policy(iam.PolicyStatement(actions=_ENI_ACTIONS, resources=["*"]))
        environment = {
            "POWERTOOLS_SERVICE_NAME": f"hookline-{spec.name}",
            "POWERTOOLS_METRICS_NAMESPACE": metrics_namespace(self),
            "HOOKLINE_CONFIG": CONFIG_PATH_IN_LAYER,
            "HOOKLINE_QUEUE_URL_PREFIX": QUEUE_URL_PREFIX,
            "HOOKLINE_RESOURCE_PREFIX": resource_prefix(self),
            # Endpoints may not name this account's resources (decision 0061).
            "HOOKLINE_ACCOUNT_ID": Stack.of(self).account,
            **ctx.database.environment(direct=spec.direct_database),
            **({"HOOKLINE_KMS_KEY_ID": ctx.secrets_key.key_arn} if ctx.secrets_key else {}),
            **tracing_environment(config),
            **spec.environment,
        }
        self.function = lambda_.Function(
            self,
            "Function",
            description=spec.description,
            runtime=ctx.layer.runtime,
            architecture=lambda_.Architecture.ARM_64,
            handler="handler.lambda_handler",
            code=lambda_.Code.from_asset(
                str(function_dir(spec.name)), exclude=["__pycache__", "*.pyc", "tests"]
            ),
            layers=[ctx.layer.layer, *collector_layers(self, config)],
            memory_size=spec.memory_mb,
            timeout=Duration.seconds(spec.timeout_seconds),
            environment=environment,
            role=self.role,
            log_group=self.log_group,
            logging_format=lambda_.LoggingFormat.JSON,
            application_log_level_v2=lambda_.ApplicationLogLevel.INFO,
            # START/END/REPORT lines cost ingestion on every invocation; Lambda metrics and
            # X-Ray carry the same numbers.
            system_log_level_v2=lambda_.SystemLogLevel.WARN,
            # Each invocation's segment (init, invocation, overhead) with no code in the
            # function; with `tracing`, the collector writes the spans of events beside them
            # with the same permission (decision 0070).
            tracing=lambda_.Tracing.ACTIVE,
            # Off with `reserve_concurrency: false` (a fresh account's quota): the SQS event
            # source's MaximumConcurrency still caps each tenant group.
            reserved_concurrent_executions=(
                spec.reserved_concurrency if config.infrastructure.reserve_concurrency else None
            ),
            recursive_loop=(lambda_.RecursiveLoop.ALLOW if spec.allow_recursive_loop else None),
            vpc=network.vpc if network else None,
            vpc_subnets=network.app_subnets if network else None,
            allow_all_outbound=True if network else None,
        )
        ctx.database.grant_connect(self.function, direct=spec.direct_database)
        if ctx.secrets_key is not None:
            ctx.secrets_key.grant(self.function, "kms:Decrypt", "kms:GenerateDataKey")
        suppress(self.role, "AwsSolutions-IAM5", WILDCARD_REASON, ["Resource::*"])
        suppress(
            self.function,
            "AwsSolutions-L1",
            "The runtime is pinned by config (infrastructure.python_version) because the layer's "
            "binary wheels (psycopg-binary) are built for that exact version; bump both together.",
        )


class ServiceFunctions(Construct):
    """receiver, the management API, fanout, reconcile and replay, each granted only what it
    uses."""

    def __init__(
        self, scope: Construct, construct_id: str, *, ctx: FunctionContext, queues: GroupQueues
    ) -> None:
        super().__init__(scope, construct_id)
        infra = ctx.config.infrastructure
        fanout = HooklineFunction(
            self,
            "Fanout",
            ctx=ctx,
            spec=FunctionSpec(
                name="fanout",
                description="Claims outbox rows, creates deliveries, enqueues due deliveries",
                memory_mb=infra.fanout_memory_mb,
                timeout_seconds=infra.fanout_timeout_seconds,
                reserved_concurrency=infra.fanout_reserved_concurrency,
            ),
        )
        receiver = HooklineFunction(
            self,
            "Receiver",
            ctx=ctx,
            spec=FunctionSpec(
                name="receiver",
                description="Verifies, stores and answers inbound webhooks; the /v1 API",
                memory_mb=infra.receiver_memory_mb,
                timeout_seconds=infra.receiver_timeout_seconds,
                environment={
                    "HOOKLINE_FANOUT_FUNCTION": fanout.function.function_name,
                    # It sends an event's deliveries itself (decision 0076).
                    "HOOKLINE_FANOUT_AT_RECEIPT": "true",
                },
                # Behind a function URL nothing else throttles the receiver (decision 0035).
                reserved_concurrency=(
                    infra.receiver_reserved_concurrency if infra.ingress == "function_url" else None
                ),
            ),
        )
        management = HooklineFunction(
            self,
            "Management",
            ctx=ctx,
            spec=FunctionSpec(
                name="api",
                description="The /v1 management API: tenants, sources, endpoints, events",
                memory_mb=infra.receiver_memory_mb,
                # API Gateway answers 504 after 29 s whatever the function does: long work is
                # a replay run (202 and the replay function), not a request.
                timeout_seconds=min(infra.api_timeout_seconds, API_GATEWAY_TIMEOUT_SECONDS),
                environment={
                    "HOOKLINE_FANOUT_FUNCTION": fanout.function.function_name,
                    # A published event's deliveries are sent by the API (decision 0076).
                    "HOOKLINE_FANOUT_AT_RECEIPT": "true",
                },
            ),
        )
        reconcile = HooklineFunction(
            self,
            "Reconcile",
            ctx=ctx,
            spec=FunctionSpec(
                name="reconcile",
                description="Finds stuck, late or inconsistent deliveries; repairs and reports",
                memory_mb=infra.worker_memory_mb,
                timeout_seconds=infra.reconcile_timeout_seconds,
                reserved_concurrency=1,  # one sweep at a time
            ),
        )
        replay = HooklineFunction(
            self,
            "Replay",
            ctx=ctx,
            spec=FunctionSpec(
                name="replay",
                description="Re-delivers by ids, endpoint+window or state; redrives DLQs",
                memory_mb=infra.worker_memory_mb,
                timeout_seconds=infra.replay_timeout_seconds,
            ),
        )
        self.receiver = receiver.function
        self.management = management.function
        self.fanout = fanout.function
        self.reconcile = reconcile.function
        self.replay = replay.function

        # A nudge or a schedule tick that fails is superseded by the next one: no retries,
        # and stale events expire after a minute (the shortest Lambda allows, the schedule's
        # period) instead of piling up as throttled invocations behind the reserved
        # concurrency.
        for fn in (self.fanout, self.reconcile):
            fn.configure_async_invoke(retry_attempts=0, max_event_age=Duration.minutes(1))

        for caller in (receiver, management):
            self.fanout.grant_invoke(caller.function)
            suppress(
                caller.role,
                "AwsSolutions-IAM5",
                "lambda:InvokeFunction on the fanout function's ARN and its versions (ARN:*), as "
                "generated by grant_invoke; no other function.",
                [f"Resource::<{logical_id_of(fanout.function)}.Arn>:*"],
            )
        # Replays created through the API run in the replay function, invoked asynchronously
        # with {"replay_id": ...} (docs/decisions/0016): the API may invoke it and nothing else.
        self.management.add_environment("HOOKLINE_REPLAY_FUNCTION", self.replay.function_name)
        self.replay.grant_invoke(self.management)
        suppress(
            management.role,
            "AwsSolutions-IAM5",
            "lambda:InvokeFunction on the replay function's ARN and its versions (ARN:*), as "
            "generated by grant_invoke; no other function.",
            [f"Resource::<{logical_id_of(replay.function)}.Arn>:*"],
        )
        # A replay larger than one run hands off and invokes the replay function again for
        # the next run (docs/decisions/0021); reconcile re-invokes a hand-off that was lost.
        # The self-grant is a policy of its own: in the role's default policy it would make
        # the function depend on its own ARN (a cycle).
        self.reconcile.add_environment("HOOKLINE_REPLAY_FUNCTION", self.replay.function_name)
        self.replay.grant_invoke(self.reconcile)
        suppress(
            reconcile.role,
            "AwsSolutions-IAM5",
            "lambda:InvokeFunction on the replay function's ARN and its versions (ARN:*), as "
            "generated by grant_invoke; no other function.",
            [f"Resource::<{logical_id_of(replay.function)}.Arn>:*"],
        )
        iam.Policy(
            self,
            "ReplayInvokesItself",
            roles=[replay.role],
            statements=[
                iam.PolicyStatement(
                    actions=["lambda:InvokeFunction"], resources=[self.replay.function_arn]
                )
            ],
        )
        for group_queue in queues.all:
            group_queue.queue.grant_send_messages(self.fanout)
            group_queue.queue.grant_send_messages(self.receiver)  # fan-out at receipt (0076)
            group_queue.queue.grant_send_messages(self.reconcile)
            group_queue.queue.grant_send_messages(self.replay)
            group_queue.queue.grant_send_messages(self.management)  # resend of one delivery
            group_queue.dlq.grant_send_messages(self.replay)
            group_queue.dlq.grant_consume_messages(self.replay)
            group_queue.dlq.grant(
                self.replay,
                "sqs:StartMessageMoveTask",
                "sqs:ListMessageMoveTasks",
                "sqs:CancelMessageMoveTask",
            )
            group_queue.dlq.grant(self.reconcile, "sqs:GetQueueAttributes")

        # Provider catch-up reads a tenant's API key secret only through a role it assumes
        # tagged with that tenant (docs/decisions/0026); reconcile may read no secret itself.
        self.catchup_secrets = CatchupSecretReader(
            self, "CatchupSecretReader", reconcile=self.reconcile, role=reconcile.role
        )


def logical_id_of(fn: lambda_.IFunction) -> str:
    """The logical id of a function's CloudFormation resource (names an IAM5 finding)."""
    return Stack.of(fn).get_logical_id(fn.node.default_child)  # type: ignore[arg-type]
