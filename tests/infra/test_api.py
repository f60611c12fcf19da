"""API Gateway REST: /in/{source_id} open, /v1/{proxy+} IAM, binary bodies, throttled stage
with JSON access logs and X-Ray, WAF with a rate rule."""

from __future__ import annotations

import json

import pytest
from aws_cdk.assertions import Match

from tests.infra.view import StackView

pytestmark = pytest.mark.infra


def _methods_on(view: StackView, path_part: str) -> dict[str, dict]:  # type: ignore[type-arg]
    """The methods on the resource `path_part`, or `parent/path_part` where that is ambiguous."""
    parent, _, part = path_part.rpartition("/")
    resources = view.of_type("AWS::ApiGateway::Resource")

    def parent_part(resource: dict) -> str:  # type: ignore[type-arg]
        ref = resource["Properties"]["ParentId"]
        return resources[ref["Ref"]]["Properties"]["PathPart"] if "Ref" in ref else ""

    (resource_id,) = [
        k
        for k, v in resources.items()
        if v["Properties"]["PathPart"] == part and (not parent or parent_part(v) == parent)
    ]
    return {
        v["Properties"]["HttpMethod"]: v["Properties"]
        for v in view.of_type("AWS::ApiGateway::Method").values()
        if v["Properties"]["ResourceId"] == {"Ref": resource_id}
    }


def _method_on(view: StackView, path_part: str) -> dict:  # type: ignore[type-arg]
    (method,) = _methods_on(view, path_part).values()
    return method


def test_every_body_arrives_base64_so_signatures_see_raw_bytes(variant: StackView) -> None:
    variant.template.has_resource_properties(
        "AWS::ApiGateway::RestApi", {"BinaryMediaTypes": ["*/*"]}
    )


def test_inbound_route_is_open_and_proxies_to_the_receiver(variant: StackView) -> None:
    receiver, _ = variant.function("Receiver")
    methods = _methods_on(variant, "{source_id}")
    # POST for webhooks, GET for the providers that handshake with GET (decision 0038)
    assert set(methods) == {"POST", "GET"}
    for method in methods.values():
        assert method["AuthorizationType"] == "NONE"
        assert method["Integration"]["Type"] == "AWS_PROXY"
        assert receiver in json.dumps(method["Integration"]["Uri"])


def test_management_api_requires_iam_and_goes_to_the_api_function(variant: StackView) -> None:
    management, _ = variant.function("Management")
    receiver, _ = variant.function("Receiver")
    method = _method_on(variant, "v1/{proxy+}")
    assert method["HttpMethod"] == "ANY"
    assert method["AuthorizationType"] == "AWS_IAM"
    assert management in json.dumps(method["Integration"]["Uri"])
    assert receiver not in json.dumps(method["Integration"]["Uri"])


def test_stage_is_throttled_traced_and_logs_json(variant: StackView) -> None:
    infra = variant.config.infrastructure
    (stage,) = variant.of_type("AWS::ApiGateway::Stage").values()
    props = stage["Properties"]
    assert props["TracingEnabled"] is True
    (settings,) = props["MethodSettings"]
    assert settings["ThrottlingRateLimit"] == infra.api_throttle_rate_per_second
    assert settings["ThrottlingBurstLimit"] == infra.api_throttle_burst
    assert settings["DataTraceEnabled"] is False
    access = props["AccessLogSetting"]
    fields = json.loads(access["Format"])
    assert {"requestId", "ip", "status", "resource", "integrationLatency"} <= set(fields)


def test_waf_rate_rules_guard_the_stage_without_blocking_a_large_provider(
    aws: StackView,
) -> None:
    infra = aws.config.infrastructure
    (acl,) = aws.of_type("AWS::WAFv2::WebACL").values()
    rules = {r["Name"]: r for r in acl["Properties"]["Rules"]}
    assert all(r["Action"] == {"Block": {}} for r in rules.values())
    # Inbound webhooks: per source address and source path, at the higher limit, so a
    # provider sending from a few addresses to many sources is not blocked as one client
    inbound = rules["inbound-rate-per-ip-and-source"]["Statement"]["RateBasedStatement"]
    assert inbound["Limit"] == infra.waf_inbound_rate_limit_per_5min
    assert inbound["AggregateKeyType"] == "CUSTOM_KEYS"
    assert [set(k) for k in inbound["CustomKeys"]] == [{"IP"}, {"UriPath"}]
    match = inbound["ScopeDownStatement"]["ByteMatchStatement"]
    assert (match["SearchString"], match["FieldToMatch"]) == ("/in/", {"UriPath": {}})
    # and per address alone across every source, so made-up source ids cannot cycle past it
    per_ip = rules["inbound-rate-per-ip"]["Statement"]["RateBasedStatement"]
    assert (per_ip["AggregateKeyType"], per_ip["Limit"]) == (
        "IP",
        infra.waf_inbound_ip_rate_limit_per_5min,
    )
    assert per_ip["ScopeDownStatement"] == {"ByteMatchStatement": match}
    # Everything else: per source address, outside /in/
    other = rules["rate-per-ip"]["Statement"]["RateBasedStatement"]
    assert (other["AggregateKeyType"], other["Limit"]) == ("IP", infra.waf_rate_limit_per_5min)
    assert other["ScopeDownStatement"]["NotStatement"]["Statement"] == {"ByteMatchStatement": match}
    aws.template.resource_count_is("AWS::WAFv2::WebACLAssociation", 1)


def test_api_gateways_account_wide_cloudwatch_role_outlives_the_stack(aws: StackView) -> None:
    (account,) = aws.of_type("AWS::ApiGateway::Account").values()
    role = account["Properties"]["CloudWatchRoleArn"]["Fn::GetAtt"][0]
    assert aws.resources[role]["DeletionPolicy"] == "Retain"
    assert account["DeletionPolicy"] == "Retain"


def test_localstack_variant_has_no_waf(localstack: StackView) -> None:
    localstack.template.resource_count_is("AWS::WAFv2::WebACL", 0)


def test_urls_are_outputs(variant: StackView) -> None:
    for output in ("ApiUrl", "InboundUrl", "ManagementApiArn"):
        variant.template.has_output(output, {"Value": Match.any_value()})
