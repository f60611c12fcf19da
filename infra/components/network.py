"""The VPC: public subnets for the NAT gateways, private subnets for the functions, isolated
subnets for the database. NAT gateways hold Elastic IPs we allocate, so deliveries leave from
addresses customers can allowlist (a stack output)."""

from __future__ import annotations

from aws_cdk import Fn
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_logs as logs
from constructs import Construct

from hookline.config import HooklineConfig
from infra.components.logging import retention


class Network(Construct):
    """A two-AZ VPC with NAT gateways on Elastic IPs and REJECT flow logs."""

    def __init__(self, scope: Construct, construct_id: str, *, config: HooklineConfig) -> None:
        super().__init__(scope, construct_id)
        nat_count = config.infrastructure.nat_gateways
        if not 1 <= nat_count <= 2:
            raise ValueError("nat_gateways must be 1 or 2 (the VPC spans 2 AZs)")
        self.egress_ips = [
            ec2.CfnEIP(self, f"NatEip{i + 1}", domain="vpc") for i in range(nat_count)
        ]
        self.vpc = ec2.Vpc(
            self,
            "Vpc",
            max_azs=2,
            nat_gateways=nat_count,
            nat_gateway_provider=ec2.NatProvider.gateway(
                eip_allocation_ids=[eip.attr_allocation_id for eip in self.egress_ips]
            ),
            subnet_configuration=[
                ec2.SubnetConfiguration(name="public", subnet_type=ec2.SubnetType.PUBLIC),
                ec2.SubnetConfiguration(name="app", subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
                ec2.SubnetConfiguration(name="db", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
            ],
        )
        # Rejected flows only: they explain a misconfigured security group at a fraction of
        # the ingestion cost of ALL (every delivery is a flow).
        flow_log_group = logs.LogGroup(
            self, "FlowLogs", retention=retention(config.log_retention_days)
        )
        self.vpc.add_flow_log(
            "RejectedFlows",
            destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_log_group),
            traffic_type=ec2.FlowLogTrafficType.REJECT,
        )
        self.app_subnets = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
        self.db_subnets = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)

    @property
    def egress_addresses(self) -> str:
        """The NAT gateways' public addresses, comma-separated (a CloudFormation token)."""
        return Fn.join(",", [eip.ref for eip in self.egress_ips])
