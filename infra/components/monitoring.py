"""One CloudWatch dashboard and the alarms, sent to one SNS topic.

Application metrics (EMF via Powertools, in the stack's own namespace: its name, so two stacks
never share a metric) are read with Metrics Insights queries (`SELECT MAX(x) FROM "<stack>"`),
which aggregate over whatever dimension sets the code
emits (Powertools adds `service`; the delivery metrics also carry `kind`, the destination
kind, decision 0057); SQS, Lambda, API Gateway and RDS metrics are read directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from hookline.config import HooklineConfig
from infra.components import alarms
from infra.components.alarm_chat import AlarmChat
from infra.components.database import Database
from infra.components.ingress import FrontMetrics
from infra.components.queues import GroupQueues, metrics_namespace

PERIOD = Duration.minutes(1)
WIDTH = 8  # three widgets per dashboard row
KIND_LABEL = "${PROP('Dim.kind')}"  # a SEARCH returns one series per destination kind


def insights(
    namespace: str, aggregate: str, metric: str, label: str, group_by: str | None = None
) -> cw.MathExpression:
    """A Metrics Insights query over every dimension set of one of this stack's metrics."""
    query = f"SELECT {aggregate}({metric}) {alarms.from_clause(namespace)}"
    if group_by:
        query += f" GROUP BY {group_by}"
    return cw.MathExpression(expression=query, label=label, period=PERIOD, using_metrics={})


def search(namespace: str, metric: str, statistic: str, label: str) -> cw.MathExpression:
    """A SEARCH over every dimension set of a stack's metric (percentiles, dashboard only)."""
    expression = f"SEARCH('Namespace=\"{namespace}\" MetricName=\"{metric}\"', '{statistic}', 300)"
    return cw.MathExpression(
        expression=expression, label=label, period=Duration.minutes(5), using_metrics={}
    )


@dataclass(frozen=True)
class Monitored:
    """What the dashboard and alarms look at."""

    queues: GroupQueues
    deliver: dict[str, lambda_.Function]
    functions: dict[str, lambda_.Function]  # receiver, fanout, reconcile, replay, migrate
    front: FrontMetrics  # the REST API, HTTP API or function URL (infrastructure.ingress)
    database: Database | None


class Monitoring(Construct):
    """The `hookline` dashboard, the alarms and the encrypted alarm topic."""

    def __init__(
        self, scope: Construct, construct_id: str, *, config: HooklineConfig, target: Monitored
    ) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        self._target = target
        self.namespace = metrics_namespace(self)
        topic_key = kms.Key(
            self,
            "TopicKey",
            enable_key_rotation=True,
            description="hookline alarm topic",
            # Encrypts notifications in flight only: nothing to keep once the stack is gone.
            removal_policy=RemovalPolicy.DESTROY,
        )
        # CloudWatch publishes alarm notifications to the encrypted topic.
        topic_key.grant(
            iam.ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey*"
        )
        self.topic = sns.Topic(
            self,
            "Alarms",
            display_name=f"{Stack.of(self).stack_name} alarms",
            master_key=topic_key,
            enforce_ssl=True,
        )
        infra = config.infrastructure
        if infra.alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(infra.alarm_email))
        if infra.alarm_chat_webhook_url:
            self.chat = AlarmChat(
                self,
                "Chat",
                config=config,
                topic=self.topic,
                webhook_url=infra.alarm_chat_webhook_url,
            )
        self.alarms = [
            *self._alarms(),
            *alarms.function_errors(
                self,
                config,
                {**target.functions, **{f"deliver-{g}": fn for g, fn in target.deliver.items()}},
            ),
            *alarms.heartbeats(self, config, self.namespace),
            *alarms.database(self, config, target.database),
            *alarms.rejections(self, config, target.front),
        ]
        actions: list[cw.IAlarmAction] = [cw_actions.SnsAction(self.topic)]
        if infra.alarm_topic_arn:
            # An existing topic (a pager's, a chat's): every alarm notifies it too.
            external = sns.Topic.from_topic_arn(self, "ExternalAlarms", infra.alarm_topic_arn)
            actions.append(cw_actions.SnsAction(external))
        for alarm in self.alarms:
            alarm.add_alarm_action(*actions)
            alarm.add_ok_action(*actions)
        self.dashboard = cw.Dashboard(
            self,
            "Dashboard",
            dashboard_name=Stack.of(self).stack_name,
            default_interval=Duration.hours(3),
            widgets=self._widgets(),
        )

    def _alarms(self) -> list[cw.Alarm]:
        infra = self._config.infrastructure
        ns = self.namespace
        alarms: list[cw.Alarm] = []
        for group_queue in self._target.queues.all:
            name = group_queue.group.name
            alarms.append(
                group_queue.dlq.metric_approximate_number_of_messages_visible(
                    period=PERIOD, statistic="Maximum"
                ).create_alarm(
                    self,
                    f"{name}DlqNotEmpty",
                    alarm_description=f"The {name} DLQ holds messages: inspect, then redrive "
                    "with the replay function (docs/operations.md).",
                    threshold=0,
                    comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
                    evaluation_periods=1,
                    treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
                )
            )
            alarms.append(
                group_queue.queue.metric_approximate_age_of_oldest_message(
                    period=PERIOD, statistic="Maximum"
                ).create_alarm(
                    self,
                    f"{name}OldestMessageAge",
                    alarm_description=f"The {name} queue's oldest message is older than "
                    f"{infra.alarm_oldest_message_age_seconds} s: deliver is behind or failing.",
                    threshold=infra.alarm_oldest_message_age_seconds,
                    comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
                    evaluation_periods=3,
                    treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
                )
            )
        alarms.append(
            insights(ns, "MAX", "OutboxLagSeconds", "fan-out lag (s)").create_alarm(
                self,
                "FanoutLag",
                alarm_description="Events wait for fan-out longer than "
                f"{infra.alarm_fanout_lag_seconds} s: the fanout function is failing or slow.",
                threshold=infra.alarm_fanout_lag_seconds,
                comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
                evaluation_periods=3,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            )
        )
        alarms.append(
            insights(ns, "MAX", "Unreconciled", "unreconciled").create_alarm(
                self,
                "Unreconciled",
                alarm_description="The reconciler found deliveries it could not repair.",
                threshold=0,
                comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
                evaluation_periods=1,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            )
        )
        alarms.append(
            insights(ns, "MAX", "FanoutQuarantined", "quarantined pairs").create_alarm(
                self,
                "FanoutQuarantined",
                alarm_description="Fan-out quarantined (event, endpoint) pairs whose matching "
                "raised: `hookline quarantine list`, fix the filter, `hookline quarantine "
                "retry` (docs/operations.md, 'Fan-out quarantine').",
                threshold=0,
                comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
                evaluation_periods=1,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            )
        )
        alarms.append(
            self._target.front.server_errors.create_alarm(
                self,
                "Receiver5xx",
                alarm_description="The API answered 5xx (503 = database unreachable).",
                threshold=infra.alarm_receiver_5xx_per_5min,
                comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
                evaluation_periods=1,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            )
        )
        return alarms

    def _widgets(self) -> list[list[cw.IWidget]]:
        target = self._target
        ns = self.namespace
        queues = target.queues.all
        rows: list[list[cw.IWidget]] = [
            [
                _graph(
                    "Ingest (per minute)",
                    [
                        insights(ns, "SUM", "EventsAccepted", "accepted"),
                        insights(ns, "SUM", "EventsDuplicate", "duplicate"),
                    ],
                ),
                _graph(
                    "Rejections by reason",
                    [insights(ns, "SUM", "EventsRejected", "rejected", group_by="Reason")],
                ),
                _graph(
                    "Fan-out",
                    [
                        insights(ns, "SUM", "DeliveriesFannedOut", "fanned out"),
                        insights(ns, "SUM", "DeliveriesEnqueued", "enqueued"),
                    ],
                    right=[insights(ns, "MAX", "OutboxLagSeconds", "lag (s)")],
                ),
            ],
            [
                _graph(
                    "Queue depth",
                    [
                        q.queue.metric_approximate_number_of_messages_visible(
                            period=PERIOD, statistic="Maximum", label=q.group.name
                        )
                        for q in queues
                    ],
                ),
                _graph(
                    "Oldest message age (s)",
                    [
                        q.queue.metric_approximate_age_of_oldest_message(
                            period=PERIOD, statistic="Maximum", label=q.group.name
                        )
                        for q in queues
                    ],
                ),
                _graph(
                    "DLQ depth",
                    [
                        q.dlq.metric_approximate_number_of_messages_visible(
                            period=PERIOD, statistic="Maximum", label=f"{q.group.name} dlq"
                        )
                        for q in queues
                    ],
                ),
            ],
            [
                _graph(
                    "Delivery outcomes",
                    [
                        insights(ns, "SUM", name, label)
                        for name, label in (
                            ("DeliverySucceeded", "succeeded"),
                            ("DeliveryRetried", "retried"),
                            ("DeliveryFailed", "failed"),
                            ("DeliveryDead", "dead"),
                        )
                    ],
                ),
                _graph(
                    "Delivery latency by kind (ms)",
                    [
                        search(ns, "DeliveryLatencyMs", "p50", f"p50 {KIND_LABEL}"),
                        search(ns, "DeliveryLatencyMs", "p99", f"p99 {KIND_LABEL}"),
                    ],
                ),
                _graph(
                    "Unreconciled",
                    [insights(ns, "MAX", "Unreconciled", "unreconciled")],
                ),
            ],
            # Per destination kind (decision 0057): the delivery metrics' one dimension.
            [
                _graph(
                    "Delivered by kind",
                    [insights(ns, "SUM", "DeliverySucceeded", "${LABEL}", group_by="kind")],
                ),
                _graph(
                    "Failed and dead by kind",
                    [
                        insights(ns, "SUM", "DeliveryFailed", "failed ${LABEL}", group_by="kind"),
                        insights(ns, "SUM", "DeliveryDead", "dead ${LABEL}", group_by="kind"),
                    ],
                ),
                _graph(
                    "Retried by kind",
                    [insights(ns, "SUM", "DeliveryRetried", "${LABEL}", group_by="kind")],
                ),
            ],
            [
                _graph(
                    "Deliver errors / throttles",
                    [
                        metric
                        for name, fn in target.deliver.items()
                        for metric in (
                            fn.metric_errors(period=PERIOD, label=f"{name} errors"),
                            fn.metric_throttles(period=PERIOD, label=f"{name} throttles"),
                        )
                    ],
                ),
                _graph(
                    "Deliver concurrency",
                    [
                        fn.metric(
                            "ConcurrentExecutions",
                            period=PERIOD,
                            statistic="Maximum",
                            label=name,
                        )
                        for name, fn in target.deliver.items()
                    ],
                ),
                _graph(
                    "Other functions: errors",
                    [
                        fn.metric_errors(period=PERIOD, label=name)
                        for name, fn in target.functions.items()
                    ],
                ),
            ],
            [
                _graph(
                    "API requests and errors",
                    [
                        target.front.requests.with_(label="requests"),
                        target.front.client_errors.with_(label="4xx"),
                        target.front.server_errors.with_(label="5xx"),
                    ],
                ),
                *self._database_widgets(),
            ],
        ]
        return rows

    def _database_widgets(self) -> list[cw.IWidget]:
        database = self._target.database
        if database is None:
            return []
        proxy_connections = cw.Metric(
            namespace="AWS/RDS",
            metric_name="ClientConnections",
            dimensions_map={"ProxyName": database.proxy.db_proxy_name},
            period=PERIOD,
            statistic="Maximum",
            label="proxy client connections",
        )
        return [
            _graph("RDS CPU (%)", [database.instance.metric_cpu_utilization(period=PERIOD)]),
            _graph(
                "Database connections",
                [
                    database.instance.metric_database_connections(
                        period=PERIOD, label="instance connections"
                    ),
                    proxy_connections,
                ],
            ),
        ]


def _graph(
    title: str, left: list[cw.IMetric], right: list[cw.IMetric] | None = None
) -> cw.GraphWidget:
    return cw.GraphWidget(title=title, left=left, right=right or [], width=WIDTH, height=6)
