"""The alarms that tell someone a running deployment is degrading (docs/operations.md, "Alarm
runbook"): every function's errors, the fan-out and reconcile heartbeats (missing = breaching),
retention's errors, the database, rejected webhooks per source and WAF blocks.

Each builder returns its alarms; `Monitoring` sends them all to the alarm topic.
"""

from __future__ import annotations

from aws_cdk import Duration, Stack
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from hookline.config import HooklineConfig
from infra.components.database import Database
from infra.components.ingress import FrontMetrics

FIVE_MINUTES = Duration.minutes(5)
GB = 1024**3
# Heartbeats: fan-out and reconcile count every run, failed or not (their handlers emit it in
# a `finally`); no run for this many schedule periods pages.
HEARTBEAT_PERIODS = 3
HEARTBEATS = {"fanout": "FanoutHeartbeat", "reconcile": "ReconcileHeartbeat"}


def from_clause(namespace: str) -> str:
    """`FROM <namespace>`, quoted where Metrics Insights needs it (a stack name's hyphens)."""
    return f"FROM {namespace}" if namespace.isalnum() else f'FROM "{namespace}"'


def insights_query(
    namespace: str, aggregate: str, metric: str, period: Duration
) -> cw.MathExpression:
    """A Metrics Insights query over every dimension set of one of this stack's metrics."""
    return cw.MathExpression(
        expression=f"SELECT {aggregate}({metric}) {from_clause(namespace)}",
        label=metric,
        period=period,
        using_metrics={},
    )


def function_errors(
    scope: Construct, config: HooklineConfig, functions: dict[str, lambda_.Function]
) -> list[cw.Alarm]:
    """One Errors alarm per function (timeouts and crashes count; a delivery's failed attempt
    does not: deliver reports it as a partial batch failure, not an error)."""
    threshold = config.infrastructure.alarm_function_errors_per_5min
    return [
        fn.metric_errors(period=FIVE_MINUTES, statistic="Sum").create_alarm(
            scope,
            f"{_title(name)}Errors",
            alarm_description=f"The {name} function failed {threshold} or more times in 5 "
            "minutes (an exception, a timeout or out of memory): read its log group's errors "
            "(docs/operations.md, 'Alarm runbook').",
            threshold=threshold,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
        )
        for name, fn in functions.items()
    ]


def heartbeats(scope: Construct, config: HooklineConfig, namespace: str) -> list[cw.Alarm]:
    """Fan-out and reconcile each count their runs; none for three schedule periods (the
    schedule stopped, the function is throttled or cannot start) breaches, and so does no data
    at all: a stack whose schedules never ran pages rather than staying OK."""
    minutes = {
        "fanout": config.schedules.fanout_minutes,
        "reconcile": config.schedules.reconcile_minutes,
    }
    alarms = []
    for name, metric in HEARTBEATS.items():
        period = Duration.minutes(max(5, minutes[name] * HEARTBEAT_PERIODS))
        alarms.append(
            insights_query(namespace, "SUM", metric, period).create_alarm(
                scope,
                f"{_title(name)}Heartbeat",
                alarm_description=f"The {name} function has not run for "
                f"{period.to_minutes()} minutes: its EventBridge rule is disabled, or the "
                "function is throttled or cannot start.",
                threshold=1,
                comparison_operator=cw.ComparisonOperator.LESS_THAN_THRESHOLD,
                evaluation_periods=1,
                treat_missing_data=cw.TreatMissingData.BREACHING,
            )
        )
    alarms.append(
        insights_query(namespace, "MAX", "RetentionErrors", FIVE_MINUTES).create_alarm(
            scope,
            "RetentionFailing",
            alarm_description="Reconcile's partition upkeep (partitions ahead, archive, "
            "retention) failed in three runs running: fix it before the partitions ahead run "
            "out or the database fills.",
            threshold=0,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=3,
            treat_missing_data=cw.TreatMissingData.IGNORE,
        )
    )
    return alarms


def database(scope: Construct, config: HooklineConfig, db: Database | None) -> list[cw.Alarm]:
    """Free storage (storage autoscaling stops at `db_max_allocated_storage_gb`), CPU,
    instance connections and the proxy's client connections. No read replica: no lag alarm."""
    if db is None:
        return []
    infra = config.infrastructure
    free_bytes = infra.db_max_allocated_storage_gb * GB * infra.alarm_db_free_storage_percent // 100
    proxy_connections = cw.Metric(
        namespace="AWS/RDS",
        metric_name="ClientConnections",
        dimensions_map={"ProxyName": db.proxy.db_proxy_name},
        period=FIVE_MINUTES,
        statistic="Maximum",
    )
    specs: list[tuple[str, cw.IMetric, float, cw.ComparisonOperator, str]] = [
        (
            "DatabaseFreeStorage",
            db.instance.metric_free_storage_space(period=FIVE_MINUTES, statistic="Minimum"),
            free_bytes,
            cw.ComparisonOperator.LESS_THAN_THRESHOLD,
            f"The database has less than {infra.alarm_db_free_storage_percent} % of its "
            f"{infra.db_max_allocated_storage_gb} GB storage ceiling free.",
        ),
        (
            "DatabaseCpu",
            db.instance.metric_cpu_utilization(period=FIVE_MINUTES, statistic="Average"),
            infra.alarm_db_cpu_percent,
            cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
            f"The database's CPU has stayed above {infra.alarm_db_cpu_percent} % for 15 minutes.",
        ),
        (
            "DatabaseConnections",
            db.instance.metric_database_connections(period=FIVE_MINUTES, statistic="Maximum"),
            infra.alarm_db_connections,
            cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
            f"The database holds more than {infra.alarm_db_connections} connections.",
        ),
        (
            "ProxyClientConnections",
            proxy_connections,
            infra.alarm_proxy_client_connections,
            cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
            f"The RDS Proxy holds more than {infra.alarm_proxy_client_connections} client "
            "connections.",
        ),
    ]
    return [
        metric.create_alarm(
            scope,
            name,
            alarm_description=description,
            threshold=threshold,
            comparison_operator=operator,
            evaluation_periods=3,
            treat_missing_data=cw.TreatMissingData.BREACHING
            if name == "DatabaseFreeStorage"
            else cw.TreatMissingData.NOT_BREACHING,
        )
        for name, metric, threshold, operator, description in specs
    ]


def rejections(scope: Construct, config: HooklineConfig, front: FrontMetrics) -> list[cw.Alarm]:
    """Rejected webhooks per source (a Contributor Insights rule over the access log: its
    largest contributor), and the web ACL's blocked requests."""
    infra = config.infrastructure
    alarms: list[cw.Alarm] = []
    if front.access_logs is not None:
        rule_name = f"{Stack.of(scope).stack_name}-rejections-per-source"
        body = {
            "Schema": {"Name": "CloudWatchLogRule", "Version": 1},
            "LogGroupNames": [front.access_logs.log_group_name],
            "LogFormat": "JSON",
            "Contribution": {
                "Keys": ["$.path"],
                "Filters": [
                    *front.inbound_filters,
                    {"Match": "$.status", "In": ["401", "403", "404"]},
                ],
            },
            "AggregateOn": "Count",
        }
        rule = cw.CfnInsightRule(
            scope,
            "RejectionsPerSource",
            rule_name=rule_name,
            rule_state="ENABLED",
            rule_body=Stack.of(scope).to_json_string(body),
        )
        worst = cw.MathExpression(
            expression=f"INSIGHT_RULE_METRIC('{rule_name}', 'MaxContributorValue')",
            label="rejections of the most rejected source",
            period=FIVE_MINUTES,
            using_metrics={},
        )
        alarm = worst.create_alarm(
            scope,
            "SourceRejected",
            alarm_description="One inbound source had more than "
            f"{infra.alarm_rejections_per_source_per_5min} requests rejected (401/403/404) in "
            f"5 minutes: its provider's secret was rotated, its URL changed, or someone probes "
            f"it. The rule {rule_name} names the source.",
            threshold=infra.alarm_rejections_per_source_per_5min,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
        )
        alarm.node.add_dependency(rule)
        alarms.append(alarm)
    if front.web_acl_name is not None:
        blocked = cw.Metric(
            namespace="AWS/WAFV2",
            metric_name="BlockedRequests",
            dimensions_map={
                "WebACL": front.web_acl_name,
                "Rule": "ALL",
                "Region": Stack.of(scope).region,
            },
            period=FIVE_MINUTES,
            statistic="Sum",
        )
        alarms.append(
            blocked.create_alarm(
                scope,
                "WafBlocking",
                alarm_description=f"The web ACL blocked more than "
                f"{infra.alarm_waf_blocked_per_5min} requests in 5 minutes: a flood, or a "
                "provider over the rate limit (its webhooks are then retried, late).",
                threshold=infra.alarm_waf_blocked_per_5min,
                comparison_operator=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
                evaluation_periods=1,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            )
        )
    return alarms


def _title(name: str) -> str:
    return "".join(part.title() for part in name.replace("-", "_").split("_"))
