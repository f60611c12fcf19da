"""One dashboard; the alarms named in the issue, all notifying one encrypted SNS topic."""

from __future__ import annotations

import json

import pytest

from tests.infra.view import StackView

pytestmark = pytest.mark.infra


def _alarms(view: StackView) -> dict[str, dict]:  # type: ignore[type-arg]
    return {k: v["Properties"] for k, v in view.of_type("AWS::CloudWatch::Alarm").items()}


def test_alarms_per_group_and_for_the_pipeline(variant: StackView) -> None:
    groups = variant.config.tenant_groups
    alarms = _alarms(variant)
    assert len([k for k in alarms if "DlqNotEmpty" in k or "OldestMessageAge" in k]) == 2 * len(
        groups
    )
    assert [k for k in alarms if "FanoutLag" in k or "Unreconciled" in k or "Receiver5xx" in k]
    for group in groups:
        dlq = [a for k, a in alarms.items() if f"{group.name}DlqNotEmpty" in k]
        age = [a for k, a in alarms.items() if f"{group.name}OldestMessageAge" in k]
        assert len(dlq) == len(age) == 1
        assert dlq[0]["MetricName"] == "ApproximateNumberOfMessagesVisible"
        assert dlq[0]["Threshold"] == 0
        assert dlq[0]["ComparisonOperator"] == "GreaterThanThreshold"
        assert age[0]["MetricName"] == "ApproximateAgeOfOldestMessage"
        assert age[0]["Threshold"] == variant.config.infrastructure.alarm_oldest_message_age_seconds


def test_pipeline_alarms_read_the_application_metrics(variant: StackView) -> None:
    alarms = _alarms(variant)
    (lag,) = [a for k, a in alarms.items() if "FanoutLag" in k]
    (unreconciled,) = [a for k, a in alarms.items() if "Unreconciled" in k]
    (errors,) = [a for k, a in alarms.items() if "Receiver5xx" in k]
    assert lag["Metrics"][0]["Expression"] == "SELECT MAX(OutboxLagSeconds) FROM Hookline"
    assert unreconciled["Metrics"][0]["Expression"] == "SELECT MAX(Unreconciled) FROM Hookline"
    assert unreconciled["Threshold"] == 0
    assert errors["MetricName"] == "5XXError"
    assert errors["Namespace"] == "AWS/ApiGateway"


def test_quarantined_fanout_pairs_page(variant: StackView) -> None:
    # Given the synthesized stack
    # When its alarms are read
    (quarantined,) = [a for k, a in _alarms(variant).items() if "FanoutQuarantined" in k]
    # Then one pages as soon as the reconciler counts a quarantined pair
    assert quarantined["Metrics"][0]["Expression"] == (
        "SELECT MAX(FanoutQuarantined) FROM Hookline"
    )
    assert quarantined["Threshold"] == 0
    assert quarantined["ComparisonOperator"] == "GreaterThanThreshold"
    assert quarantined["TreatMissingData"] == "notBreaching"
    assert "hookline quarantine retry" in quarantined["AlarmDescription"]


def test_every_alarm_notifies_the_topic(variant: StackView) -> None:
    (topic_id, topic) = next(iter(variant.of_type("AWS::SNS::Topic").items()))
    assert "KmsMasterKeyId" in topic["Properties"]
    for name, alarm in _alarms(variant).items():
        assert alarm["AlarmActions"] == [{"Ref": topic_id}], name
        assert alarm["OKActions"] == [{"Ref": topic_id}], name
    variant.template.has_output("AlarmTopicArn", {"Value": {"Ref": topic_id}})


def test_dashboard_shows_what_the_issue_lists(variant: StackView) -> None:
    (dashboard,) = variant.of_type("AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    for needle in (
        "EventsAccepted",
        "EventsRejected",
        "GROUP BY Reason",
        "OutboxLagSeconds",
        "ApproximateNumberOfMessagesVisible",
        "ApproximateAgeOfOldestMessage",
        "DeliverySucceeded",
        "DeliveryDead",
        "DeliveryLatencyMs",
        "p99",
        "Throttles",
        "ConcurrentExecutions",
        "Unreconciled",
    ):
        assert needle in body, needle


def test_dashboard_shows_the_database_on_aws(aws: StackView) -> None:
    (dashboard,) = aws.of_type("AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    assert "CPUUtilization" in body
    assert "DatabaseConnections" in body
    assert "ClientConnections" in body


def test_traces_are_sampled_at_the_configured_rate(variant: StackView) -> None:
    variant.template.has_resource_properties(
        "AWS::XRay::SamplingRule",
        {
            "SamplingRule": {
                "FixedRate": variant.config.infrastructure.xray_sampling_rate,
                "ReservoirSize": 1,
                # This stack's functions only, not every service of the account
                "ServiceName": f"{variant.stack.stack_name}-*",
                "ServiceType": "*",
                "Host": "*",
                "HTTPMethod": "*",
                "URLPath": "*",
                "ResourceARN": "*",
                "Priority": 100,
                "RuleName": "Hookline",
                "Version": 1,
            }
        },
    )


def test_dashboard_splits_delivery_outcomes_by_destination_kind(variant: StackView) -> None:
    (dashboard,) = variant.of_type("AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    for metric in ("DeliverySucceeded", "DeliveryFailed", "DeliveryDead", "DeliveryRetried"):
        assert f"SELECT SUM({metric}) FROM Hookline GROUP BY kind" in body, metric
    # and the latency percentiles one line per kind
    assert "p99 ${PROP('Dim.kind')}" in body


def test_every_project_function_has_an_errors_alarm(variant: StackView) -> None:
    # Given every Hookline function of the stack (receiver, API, fan-out, reconcile, replay,
    # migrate, console, one deliver per group)
    alarms = _alarms(variant)
    watched = {
        d["Value"]["Ref"]
        for a in alarms.values()
        if a.get("MetricName") == "Errors"
        for d in a["Dimensions"]
        if d["Name"] == "FunctionName"
    }
    # Then each has an Errors alarm that pages at the first failure
    assert set(variant.functions()) <= watched
    for alarm in alarms.values():
        if alarm.get("MetricName") == "Errors":
            assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"
            assert alarm["Threshold"] == 1


def test_fanout_and_reconcile_heartbeats_alarm_when_missing(variant: StackView) -> None:
    alarms = _alarms(variant)
    for name, metric in (("Fanout", "FanoutHeartbeat"), ("Reconcile", "ReconcileHeartbeat")):
        (beat,) = [a for k, a in alarms.items() if f"{name}Heartbeat" in k]
        # A stopped schedule sends no data at all: missing data must page, not read as OK.
        assert beat["TreatMissingData"] == "breaching"
        assert beat["ComparisonOperator"] == "LessThanThreshold"
        assert beat["Metrics"][0]["Expression"] == f"SELECT SUM({metric}) FROM Hookline"
    (retention,) = [a for k, a in alarms.items() if "RetentionFailing" in k]
    assert retention["Metrics"][0]["Expression"] == "SELECT MAX(RetentionErrors) FROM Hookline"


def test_database_storage_cpu_and_connections_alarm(aws: StackView) -> None:
    infra = aws.config.infrastructure
    alarms = {a.get("MetricName"): a for a in _alarms(aws).values()}
    storage = alarms["FreeStorageSpace"]
    assert storage["ComparisonOperator"] == "LessThanThreshold"
    assert storage["Threshold"] == infra.db_max_allocated_storage_gb * 1024**3 // 10
    assert alarms["CPUUtilization"]["Threshold"] == infra.alarm_db_cpu_percent
    assert alarms["DatabaseConnections"]["Threshold"] == infra.alarm_db_connections
    assert alarms["ClientConnections"]["Namespace"] == "AWS/RDS"


def test_rejections_per_source_and_waf_blocks_alarm(aws: StackView) -> None:
    # Given the REST API's access log, a Contributor Insights rule counts 401/403/404 per
    # inbound path (one source each)
    (rule,) = aws.of_type("AWS::CloudWatch::InsightRule").values()
    body = json.dumps(rule["Properties"]["RuleBody"])
    assert '\\"Keys\\":[\\"$.path\\"]' in body
    assert "401" in body and "/in/{source_id}" in body
    alarms = _alarms(aws)
    (per_source,) = [a for k, a in alarms.items() if "SourceRejected" in k]
    expression = per_source["Metrics"][0]["Expression"]
    assert (
        expression == "INSIGHT_RULE_METRIC('Hookline-rejections-per-source', 'MaxContributorValue')"
    )
    (waf,) = [a for k, a in alarms.items() if "WafBlocking" in k]
    assert waf["MetricName"] == "BlockedRequests"
    assert {"Name": "WebACL", "Value": "hookline-api"} in waf["Dimensions"]
