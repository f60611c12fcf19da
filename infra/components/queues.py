"""Per tenant group: a delivery queue and its dead-letter queue.

Queues are standard queues; fan-out sets `MessageGroupId` = endpoint id, which makes SQS treat
them as fair queues (one noisy endpoint does not raise everyone's dwell time). Names come from
`TenantGroup.queue_name_for(prefix)` / `dlq_name_for` because the code builds queue URLs from
them; the prefix is the stack's name (`resource_prefix`), so stacks live side by side.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration, Stack
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from hookline.config import HooklineConfig, TenantGroup

# The event source mapping needs the visibility timeout to cover every retry of a batch:
# AWS recommends at least six times the function timeout.
VISIBILITY_TIMEOUT_FACTOR = 6
MESSAGE_RETENTION = Duration.days(4)  # Postgres is the source of truth; reconcile re-enqueues
DLQ_RETENTION = Duration.days(14)  # the SQS maximum: time to look and redrive


@dataclass(frozen=True)
class GroupQueue:
    """The delivery queue and DLQ of one tenant group."""

    group: TenantGroup
    queue: sqs.Queue
    dlq: sqs.Queue


class GroupQueues(Construct):
    """One `GroupQueue` per tenant group, keyed by group name."""

    def __init__(self, scope: Construct, construct_id: str, *, config: HooklineConfig) -> None:
        super().__init__(scope, construct_id)
        visibility = Duration.seconds(
            VISIBILITY_TIMEOUT_FACTOR * config.deliver_function_timeout_seconds
        )
        self.by_group: dict[str, GroupQueue] = {}
        prefix = resource_prefix(self)
        for group in config.tenant_groups:
            dlq = sqs.Queue(
                self,
                f"{group.name}-dlq",
                queue_name=group.dlq_name_for(prefix),
                encryption=sqs.QueueEncryption.SQS_MANAGED,
                enforce_ssl=True,
                retention_period=DLQ_RETENTION,
            )
            queue = sqs.Queue(
                self,
                group.name,
                queue_name=group.queue_name_for(prefix),
                encryption=sqs.QueueEncryption.SQS_MANAGED,
                enforce_ssl=True,
                visibility_timeout=visibility,
                retention_period=MESSAGE_RETENTION,
                dead_letter_queue=sqs.DeadLetterQueue(
                    queue=dlq, max_receive_count=group.max_receive_count
                ),
            )
            self.by_group[group.name] = GroupQueue(group=group, queue=queue, dlq=dlq)

    @property
    def all(self) -> list[GroupQueue]:
        """Every group's queues, in config order."""
        return list(self.by_group.values())


def resource_prefix(scope: Construct) -> str:
    """The start of this stack's physical names: its name, lowercased ("Hookline" keeps the
    names `hookline-deliver-<group>`; "HooklineStaging" gets its own)."""
    return Stack.of(scope).stack_name.lower()


def metrics_namespace(scope: Construct) -> str:
    """This stack's CloudWatch namespace for the application metrics: its name, so two stacks
    in one account never add to each other's metrics or trip each other's alarms."""
    return Stack.of(scope).stack_name
