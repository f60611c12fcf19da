"""The VPC: public subnets for the NAT gateways, private subnets for the functions, isolated
subnets for the database. NAT gateways hold Elastic IPs we allocate, so deliveries leave from
addresses customers can allowlist (a stack output)."""

from __future__ import annotations

from aws_cdk import Fn, RemovalPolicy
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
        existing = config.infrastructure.nat_eip_allocation_ids
        if existing and len(existing) != nat_count:
            raise ValueError(
                "infrastructure.nat_eip_allocation_ids must name one allocation per NAT gateway"
            )
        self.egress_ips = [
            ec2.CfnEIP(self, f"NatEip{i + 1}", domain="vpc")
            for i in range(0 if existing else nat_count)
        ]
        for eip in self.egress_ips:
            # Customers allowlist these addresses: a stack delete or a NAT count change keeps
            # them (a failed first create still releases them).
            eip.apply_removal_policy(RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE)
        self._existing = tuple(existing)
        allocation_ids = list(existing) or [eip.attr_allocation_id for eip in self.egress_ips]
        self.vpc = ec2.Vpc(
            self,
            "Vpc",
            max_azs=2,
            nat_gateways=nat_count,
            nat_gateway_provider=ec2.NatProvider.gateway(eip_allocation_ids=allocation_ids),
            subnet_configuration=[
                ec2.SubnetConfiguration(name="public", subnet_type=ec2.SubnetType.PUBLIC),
                ec2.SubnetConfiguration(name="app", subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
                ec2.SubnetConfiguration(name="db", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
            ],
        )
        # Rejected flows only: they explain a misconfigured security group at a fraction of
        # the ingestion cost of ALL (every delivery is a flow).
        flow_log_group = logs.LogGroup(
            self,
            "FlowLogs",
            retention=retention(config.log_retention_days),
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.vpc.add_flow_log(
            "RejectedFlows",
            destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_log_group),
            traffic_type=ec2.FlowLogTrafficType.REJECT,
        )
        # Archive writes and reads go to S3 through the route table, not through NAT (which
        # bills every gigabyte).
        self.vpc.add_gateway_endpoint("S3", service=ec2.GatewayVpcEndpointAwsService.S3)
        self.app_subnets = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
        self.db_subnets = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)

    @property
    def egress_addresses(self) -> str:
        """The NAT gateways' public addresses, comma-separated (a CloudFormation token)."""
        if not self.egress_ips:  # existing allocations: their addresses are known to the user
            return ",".join(self._existing)
        return Fn.join(",", [eip.ref for eip in self.egress_ips])
