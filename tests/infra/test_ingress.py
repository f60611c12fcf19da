"""The front door, chosen (`infrastructure.ingress`, decision 0035): the HTTP API and function
URL options synthesize with cdk-nag and cfn-lint clean, and keep `/in` open and `/v1` IAM."""

from __future__ import annotations

import dataclasses

import pytest
from cdk_nag import AwsSolutionsChecks

from hookline.config import HooklineConfig
from tests.infra.view import StackView, env_of, synthesize

pytestmark = pytest.mark.infra


def _with_ingress(ingress: str) -> HooklineConfig:
    config = HooklineConfig()
    return dataclasses.replace(
        config, infrastructure=dataclasses.replace(config.infrastructure, ingress=ingress)
    )


@pytest.fixture(scope="module", params=["http", "function_url"])
def front(request: pytest.FixtureRequest) -> StackView:
    view = synthesize({}, config=_with_ingress(request.param))
    view.start_lint(every_region=True)  # function URLs are missing in some regions
    return view


def test_the_http_api_keeps_in_open_and_v1_behind_iam_with_payload_2(front: StackView) -> None:
    if front.config.infrastructure.ingress != "http":
        pytest.skip("HTTP API only")
    front.template.resource_count_is("AWS::ApiGateway::RestApi", 0)
    front.template.resource_count_is("AWS::WAFv2::WebACL", 0)
    routes = {r["Properties"]["RouteKey"]: r["Properties"] for r in front.of_type(
        "AWS::ApiGatewayV2::Route").values()}  # fmt: skip
    assert routes["POST /in/{source_id}"].get("AuthorizationType", "NONE") == "NONE"
    # GET answers the verification handshakes of Meta, X, Dropbox and Okta
    assert routes["GET /in/{source_id}"].get("AuthorizationType", "NONE") == "NONE"
    assert routes["ANY /v1/{proxy+}"]["AuthorizationType"] == "AWS_IAM"
    console, _ = front.function("ConsoleFunction")
    for integration in front.of_type("AWS::ApiGatewayV2::Integration").values():
        target = integration["Properties"]["IntegrationUri"]["Fn::GetAtt"][0]
        # The console's pages are REST-shaped (payload 1.0, tests/infra/test_console.py)
        assert integration["Properties"]["PayloadFormatVersion"] == (
            "1.0" if target == console else "2.0"
        )
    (stage,) = front.of_type("AWS::ApiGatewayV2::Stage").values()
    infra = front.config.infrastructure
    assert stage["Properties"]["DefaultRouteSettings"]["ThrottlingRateLimit"] == (
        infra.api_throttle_rate_per_second
    )
    assert "DestinationArn" in stage["Properties"]["AccessLogSettings"]


def test_function_urls_open_the_receiver_and_sign_the_api(front: StackView) -> None:
    if front.config.infrastructure.ingress != "function_url":
        pytest.skip("function URLs only")
    front.template.resource_count_is("AWS::ApiGateway::RestApi", 0)
    front.template.resource_count_is("AWS::ApiGatewayV2::Api", 0)
    receiver, fn = front.function("Receiver")
    management, _ = front.function("Management")
    console, _ = front.function("ConsoleFunction")
    urls = {u["Properties"]["TargetFunctionArn"]["Fn::GetAtt"][0]: u["Properties"]["AuthType"]
            for u in front.of_type("AWS::Lambda::Url").values()}  # fmt: skip
    # The console signs its users in itself (tests/infra/test_console.py)
    assert urls == {receiver: "NONE", management: "AWS_IAM", console: "NONE"}
    # The receiver's reserved concurrency is its throttle
    infra = front.config.infrastructure
    assert fn["Properties"]["ReservedConcurrentExecutions"] == infra.receiver_reserved_concurrency
    # and the console's public URL has a throttle of its own
    pages = front.resources[console]["Properties"]
    assert pages["ReservedConcurrentExecutions"] == infra.console_reserved_concurrency
    assert "HOOKLINE_FANOUT_FUNCTION" in env_of(fn)


def test_cdk_nag_finds_nothing_unacknowledged(front: StackView) -> None:
    report = AwsSolutionsChecks(front.app).validate_scope(front.stack)
    findings = [
        f"{v.rule_name}: {r.resource_logical_id or r.locations} — {v.description[:120]}"
        for v in report.violations
        for r in v.violating_resources
    ]
    assert findings == []


def test_cfn_lint_reports_no_error_or_new_warning(front: StackView) -> None:
    matches = front.lint_matches()
    problems = [
        f"{m['Rule']['Id']} {m['Message']}"
        for m in matches
        if m["Level"] == "Error" or m["Rule"]["Id"] != "W3005"
    ]
    assert problems == []


def test_the_5xx_alarm_reads_the_chosen_fronts_errors(front: StackView) -> None:
    (alarm,) = [
        a["Properties"] for k, a in front.of_type("AWS::CloudWatch::Alarm").items()
        if "Receiver5xx" in k
    ]  # fmt: skip
    expected = {"http": ("AWS/ApiGateway", "5xx"), "function_url": ("AWS/Lambda", "Url5xxCount")}
    assert (alarm["Namespace"], alarm["MetricName"]) == expected[
        front.config.infrastructure.ingress
    ]
