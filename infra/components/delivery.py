"""Per tenant group: the deliver function fed by the group's queue.

The event source's `MaximumConcurrency` is the group's cap — it alone decides how many batches
are in flight — and reserved concurrency is set to the same number so the cap can always be
reached and the group can never take more of the account's concurrency than that.
"""

from __future__ import annotations

from aws_cdk import Aws, Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from constructs import Construct

from infra.components.functions import FunctionContext, FunctionSpec, HooklineFunction
from infra.components.queues import GroupQueue, GroupQueues
from infra.nag import suppress

CUSTOMER_ROLE_PREFIX = "hookline-delivery-"  # hookline.destinations.ROLE_NAME_PREFIX

MIN_MAX_CONCURRENCY = 2  # the SQS event source's lower bound
MAX_BATCH_WITHOUT_WINDOW = 10  # larger batches need a batching window


def validate_group(group_queue: GroupQueue) -> None:
    """Refuse a tenant group the SQS event source would reject at deploy time."""
    group = group_queue.group
    if not MIN_MAX_CONCURRENCY <= group.max_concurrency <= 1000:
        raise ValueError(f"tenant group {group.name}: max_concurrency must be 2..1000")
    if group.batch_size > MAX_BATCH_WITHOUT_WINDOW and group.batching_window_seconds == 0:
        raise ValueError(f"tenant group {group.name}: batch_size > 10 needs a batching window")
    if not 1 <= group.batch_size <= 10_000:
        raise ValueError(f"tenant group {group.name}: batch_size must be 1..10000")


def allow_customer_roles(deliver: HooklineFunction) -> None:
    """AWS destinations (docs/decisions/0046): the deliverer may assume only roles named
    `hookline-delivery-*`, in any account (they are the customers'), and only when it
    passes an ExternalId — the customers' trust policies require their tenant's."""
    deliver.role.add_to_policy(
        iam.PolicyStatement(
            actions=["sts:AssumeRole"],
            resources=[f"arn:{Aws.PARTITION}:iam::*:role/{CUSTOMER_ROLE_PREFIX}*"],
            conditions={"StringLike": {"sts:ExternalId": "hkl-*"}},
        )
    )
    suppress(
        deliver.role,
        "AwsSolutions-IAM5",
        "sts:AssumeRole on the customers' delivery roles: their accounts are not known at "
        "deploy time, so the account is '*'; the role name is fixed to hookline-delivery-* and "
        "an ExternalId is required (each customer's trust policy names its tenant's).",
        [f"Resource::arn:<AWS::Partition>:iam::*:role/{CUSTOMER_ROLE_PREFIX}*"],
    )


class DeliverFunctions(Construct):
    """One deliver function per tenant group, keyed by group name."""

    def __init__(
        self, scope: Construct, construct_id: str, *, ctx: FunctionContext, queues: GroupQueues
    ) -> None:
        super().__init__(scope, construct_id)
        config = ctx.config
        self.by_group: dict[str, lambda_.Function] = {}
        for group_queue in queues.all:
            validate_group(group_queue)
            group = group_queue.group
            deliver = HooklineFunction(
                self,
                group.name,
                ctx=ctx,
                spec=FunctionSpec(
                    name="deliver",
                    description=f"Delivers the {group.name} tenant group's queue",
                    memory_mb=config.infrastructure.deliver_memory_mb,
                    timeout_seconds=config.deliver_function_timeout_seconds,
                    environment={"HOOKLINE_TENANT_GROUP": group.name},
                    reserved_concurrency=group.max_concurrency,
                    # Deferrals and short retries go back to this function's own queue; after
                    # ~16 hops Lambda would stop the chain. The bounce is bounded in the code
                    # instead: a delivery deferred too often in a row is parked in Postgres
                    # (docs/decisions/0034).
                    allow_recursive_loop=True,
                ),
            )
            window = group.batching_window_seconds
            deliver.function.add_event_source(
                sources.SqsEventSource(
                    group_queue.queue,
                    batch_size=group.batch_size,
                    max_batching_window=Duration.seconds(window) if window else None,
                    report_batch_item_failures=True,
                    max_concurrency=group.max_concurrency,
                )
            )
            # Short retries ride an SQS delay on the same queue.
            group_queue.queue.grant_send_messages(deliver.function)
            allow_customer_roles(deliver)
            self.by_group[group.name] = deliver.function
