"""The VPC: two AZs, NAT gateways on our Elastic IPs (an output), isolated DB subnets."""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Match

from tests.infra.view import StackView

pytestmark = pytest.mark.infra


def test_vpc_spans_two_azs_with_public_private_and_isolated_subnets(aws: StackView) -> None:
    # Given the default configuration, When synthesized
    subnets = aws.of_type("AWS::EC2::Subnet")
    # Then there is one VPC with 3 subnet tiers over 2 AZs
    aws.template.resource_count_is("AWS::EC2::VPC", 1)
    assert len(subnets) == 6
    kinds = sorted(
        next(t["Value"] for t in s["Properties"]["Tags"] if t["Key"] == "aws-cdk:subnet-type")
        for s in subnets.values()
    )
    assert kinds == ["Isolated", "Isolated", "Private", "Private", "Public", "Public"]


def test_nat_gateways_hold_the_stacks_own_elastic_ips(aws: StackView) -> None:
    eips = aws.of_type("AWS::EC2::EIP")
    nats = aws.of_type("AWS::EC2::NatGateway")
    assert len(eips) == len(nats) == aws.config.infrastructure.nat_gateways
    allocations = {str(n["Properties"]["AllocationId"]) for n in nats.values()}
    assert allocations == {str({"Fn::GetAtt": [eip, "AllocationId"]}) for eip in eips}


def test_egress_addresses_are_an_output(aws: StackView) -> None:
    eips = sorted(aws.of_type("AWS::EC2::EIP"))
    aws.template.has_output(
        "DeliveryEgressIps",
        {"Value": {"Fn::Join": [",", [{"Ref": eip} for eip in eips]]}},
    )


def test_rejected_flows_are_logged(aws: StackView) -> None:
    aws.template.has_resource_properties(
        "AWS::EC2::FlowLog", {"TrafficType": "REJECT", "LogDestinationType": "cloud-watch-logs"}
    )


def test_functions_run_in_the_private_subnets(aws: StackView) -> None:
    private = {k for k, v in aws.of_type("AWS::EC2::Subnet").items() if "app" in k.lower()}
    for name, fn in aws.functions().items():
        vpc_config = fn["Properties"]["VpcConfig"]
        assert {s["Ref"] for s in vpc_config["SubnetIds"]} == private, name
    assert private, "no private subnets found"
    aws.template.has_resource_properties(
        "AWS::Lambda::Function", {"VpcConfig": Match.object_like({"SubnetIds": Match.any_value()})}
    )


def test_the_elastic_ips_outlive_the_stack_and_a_nat_count_change(aws: StackView) -> None:
    # Customers allowlist these addresses: a stack delete or a replacement keeps them, while a
    # failed first create still releases them.
    for logical_id, eip in aws.of_type("AWS::EC2::EIP").items():
        assert eip["DeletionPolicy"] == "RetainExceptOnCreate", logical_id
        assert eip["UpdateReplacePolicy"] == "Retain", logical_id


def test_archive_traffic_skips_the_nat_gateways(aws: StackView) -> None:
    (endpoint,) = aws.of_type("AWS::EC2::VPCEndpoint").values()
    assert endpoint["Properties"]["VpcEndpointType"] == "Gateway"
    assert "s3" in str(endpoint["Properties"]["ServiceName"])
