"""Where the functions find Postgres.

On AWS: RDS PostgreSQL 16 in the isolated subnets, its password in the Secrets Manager secret
RDS manages and rotates (username, password), and an RDS Proxy in front so Lambda scaling
cannot exhaust connections. In the LocalStack variant: an external database whose URL is kept
in a secret the user creates before deploying.
"""

from __future__ import annotations

from typing import Protocol

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_rds as rds
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import custom_resources as cr
from constructs import Construct, IDependable

from hookline.config import HooklineConfig
from infra.components.logging import retention
from infra.components.network import Network
from infra.nag import suppress

DATABASE_NAME = "hookline"
DATABASE_USER = "hookline"  # the secret's user; functions sign IAM tokens for it at the proxy
POSTGRES_PORT = ec2.Port.tcp(5432)
AWS_CUSTOM_RESOURCE_ID = "AWS679f53fac002430cb0da5b7982bd2287"  # CDK's singleton provider


class DatabaseAccess(Protocol):
    """What a function needs to reach the database: settings and permissions."""

    def environment(self, *, direct: bool = False) -> dict[str, str]:
        """Environment variables that tell `hookline.settings` how to connect."""
        ...

    def grant_connect(self, fn: lambda_.Function, *, direct: bool = False) -> None:
        """Let `fn` read the credentials and open connections (network + IAM)."""
        ...


class Database(Construct):
    """RDS PostgreSQL 16 + its RDS-managed, RDS-rotated secret + RDS Proxy (TLS). The functions
    authenticate to the proxy with IAM (a token per connection) and never see the password;
    the proxy authenticates to the instance with the secret, whose rotation it follows
    (docs/decisions/0033). Only migrate, which goes to the instance directly, reads it."""

    def __init__(
        self, scope: Construct, construct_id: str, *, config: HooklineConfig, network: Network
    ) -> None:
        super().__init__(scope, construct_id)
        infra = config.infrastructure
        # The major version only (decision 0062): RDS picks its current minor, and upgrades
        # it, so a template never names a minor version RDS has retired.
        engine = rds.DatabaseInstanceEngine.postgres(
            version=rds.PostgresEngineVersion.of(infra.db_engine_version, infra.db_engine_version)
        )
        # What differs from RDS's default group (decisions 0094, 0102); dynamic, so no reboot
        # beyond the one RDS asks for when an existing instance changes group.
        parameters = rds.ParameterGroup(
            self,
            "Parameters",
            engine=engine,
            description="Hookline: full-page images compressed in the WAL, no JIT",
            parameters=infra.db_parameters(),
        )
        self.instance = rds.DatabaseInstance(
            self,
            "Instance",
            engine=engine,
            parameter_group=parameters,
            instance_type=ec2.InstanceType(infra.db_instance_type),
            vpc=network.vpc,
            vpc_subnets=network.db_subnets,
            database_name=DATABASE_NAME,
            credentials=rds.Credentials.from_username(DATABASE_USER),
            # RDS keeps the password in a secret it creates and rotates itself (every 7 days):
            # no rotation function, no Serverless Application Repository app, no SAM
            # transform, so the stack deploys wherever RDS does (decision 0062).
            manage_master_user_password=True,
            allocated_storage=infra.db_allocated_storage_gb,
            max_allocated_storage=infra.db_max_allocated_storage_gb,
            storage_type=rds.StorageType.GP3,
            storage_encrypted=True,
            multi_az=infra.db_multi_az,
            backup_retention=Duration.days(infra.db_backup_retention_days),
            preferred_backup_window=infra.db_backup_window,
            preferred_maintenance_window=infra.db_maintenance_window,
            # Nothing undeletable at create (decision 0063): a failed first deploy must roll
            # back whole. `DeletionProtectionAfterCreate` turns protection on once the rest of
            # the stack exists; a stack delete keeps the instance (RetainExceptOnCreate).
            deletion_protection=False,
            removal_policy=(
                RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE
                if infra.deletion_protection
                else RemovalPolicy.DESTROY
            ),
            enable_performance_insights=True,
            cloudwatch_logs_exports=["postgresql"],
            # RDS creates the export's log group itself, never expiring, unless told.
            cloudwatch_logs_retention=retention(config.log_retention_days),
            auto_minor_version_upgrade=True,
            publicly_accessible=False,
        )
        secret = self.instance.secret
        if secret is None:  # the CDK version's L2 does not name the managed secret
            cfn_instance = self.instance.node.default_child
            assert isinstance(cfn_instance, rds.CfnDBInstance)
            secret = secretsmanager.Secret.from_secret_complete_arn(
                self, "ManagedSecret", cfn_instance.attr_master_user_secret_secret_arn
            )
        self.secret: secretsmanager.ISecret = secret
        # A sibling of the instance, not its child: the migrations trigger waits for the
        # instance only, while the functions' ingress rules on the proxy wait for the trigger.
        self.proxy = rds.DatabaseProxy(
            self,
            "Proxy",
            proxy_target=rds.ProxyTarget.from_instance(self.instance),
            secrets=[self.secret],
            vpc=network.vpc,
            vpc_subnets=network.db_subnets,
            require_tls=True,
            iam_auth=True,
            debug_logging=False,
        )
        self._nag(config)

    def _nag(self, config: HooklineConfig) -> None:
        # CDK's log-retention provider (one per stack) sets the export log group's retention.
        for child in Stack.of(self).node.children:
            if child.node.id.startswith("LogRetention"):
                suppress(
                    child,
                    "AwsSolutions-IAM4",
                    "CDK's log-retention provider function uses the AWS managed "
                    "AWSLambdaBasicExecutionRole for its own logs.",
                    ["Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                     "AWSLambdaBasicExecutionRole"],
                )  # fmt: skip
                suppress(
                    child,
                    "AwsSolutions-IAM5",
                    "CDK's log-retention provider sets retention on log groups by name "
                    "(logs:PutRetentionPolicy on '*', as CDK generates it).",
                    ["Resource::*"],
                )
        suppress(
            self.instance,
            "AwsSolutions-RDS11",
            "The default port is kept: the instance sits in isolated subnets and its security "
            "group admits only the proxy and the migrate function; a custom port hides nothing.",
        )
        if not config.infrastructure.db_multi_az:
            suppress(
                self.instance,
                "AwsSolutions-RDS3",
                "Multi-AZ is a config switch (infrastructure.db_multi_az); Postgres is restored "
                "from automated backups and the ledger is re-fanned-out after a failover.",
            )
        suppress(
            self.instance,
            "AwsSolutions-RDS6",
            "Functions authenticate to the RDS Proxy with IAM (decision 0033); the proxy and "
            "the migrate function authenticate to the instance with the rotated secret, so "
            "IAM authentication on the instance itself is unused.",
        )
        suppress(
            self.instance,
            "AwsSolutions-RDS10",
            "Deletion protection is turned on by a custom resource once the first create has "
            "succeeded (decision 0063), so a failed first deploy can roll back; off only where "
            "infrastructure.deletion_protection is false (throwaway stacks).",
        )
        suppress(
            self.instance,
            "AwsSolutions-SMG4",
            "RDS manages the master secret and rotates it itself every 7 days "
            "(ManageMasterUserPassword, decision 0062).",
        )

    def protect_after(self, config: HooklineConfig, created: list[IDependable]) -> None:
        """Turn the instance's deletion protection on once everything in `created` exists
        (decision 0063): until then a failed first deploy can delete what it made. On a
        stack delete the resource does nothing: the instance stays, protected and retained."""
        if not config.infrastructure.deletion_protection:
            return
        call = cr.AwsSdkCall(
            service="RDS",
            action="modifyDBInstance",
            parameters={
                "DBInstanceIdentifier": self.instance.instance_identifier,
                "DeletionProtection": True,
                "ApplyImmediately": True,
            },
            physical_resource_id=cr.PhysicalResourceId.of(self.instance.instance_identifier),
        )
        # A child of the stack, not of this construct: it depends on everything else, this
        # construct included.
        protect = cr.AwsCustomResource(
            Stack.of(self),
            "DatabaseDeletionProtection",
            on_create=call,
            on_update=call,
            policy=cr.AwsCustomResourcePolicy.from_statements(
                [
                    iam.PolicyStatement(
                        actions=["rds:ModifyDBInstance"],
                        resources=[self.instance.instance_arn],
                    )
                ]
            ),
            install_latest_aws_sdk=False,
            # CDK's provider would make a log group that never expires and outlives the stack.
            log_group=logs.LogGroup(
                self,
                "ProtectionLogs",
                retention=retention(config.log_retention_days),
                removal_policy=RemovalPolicy.DESTROY,
            ),
        )
        protect.node.add_dependency(*created)
        self._nag_provider()

    def _nag_provider(self) -> None:
        provider = Stack.of(self).node.try_find_child(AWS_CUSTOM_RESOURCE_ID)
        if provider is None:
            return
        suppress(
            provider,
            "AwsSolutions-IAM4",
            "CDK's AwsCustomResource provider uses the AWS managed AWSLambdaBasicExecutionRole "
            "for its own logs.",
            ["Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
             "AWSLambdaBasicExecutionRole"],
        )  # fmt: skip
        suppress(
            provider,
            "AwsSolutions-L1",
            "CDK's AwsCustomResource provider: its runtime is chosen by the CDK version.",
        )

    def environment(self, *, direct: bool = False) -> dict[str, str]:
        """The proxy endpoint and the IAM database user; for `direct` (migrations) the
        secret's ARN instead (the instance, with the rotated password)."""
        if direct:
            # The managed secret holds no host or database name.
            return {
                "HOOKLINE_DATABASE_SECRET_ARN": self.secret.secret_arn,
                "HOOKLINE_DATABASE_HOST": self.instance.db_instance_endpoint_address,
                "HOOKLINE_DATABASE_NAME": DATABASE_NAME,
            }
        return {
            "HOOKLINE_DATABASE_HOST": self.proxy.endpoint,
            "HOOKLINE_DATABASE_IAM_USER": DATABASE_USER,
            "HOOKLINE_DATABASE_NAME": DATABASE_NAME,
            "HOOKLINE_DATABASE_PROXIED": "true",
        }

    def grant_connect(self, fn: lambda_.Function, *, direct: bool = False) -> None:
        """rds-db:connect at the proxy as the database user (or, `direct`, a read of the
        one secret); port 5432 from `fn` to the proxy (or instance)."""
        if direct:
            self.secret.grant_read(_role(fn))
        else:
            self.proxy.grant_connect(_role(fn), DATABASE_USER)
        target: ec2.IConnectable = self.instance if direct else self.proxy
        target.connections.allow_from(fn, POSTGRES_PORT, f"{fn.node.id} to Postgres")


class ExternalDatabase(Construct):
    """LocalStack variant: an external Postgres whose URL lives in an existing secret.

    The secret's value is JSON `{"url": "postgresql://..."}`, created before the deploy
    (`make deploy-localstack` does it from $DATABASE_URL).
    """

    def __init__(self, scope: Construct, construct_id: str, *, secret_name: str) -> None:
        super().__init__(scope, construct_id)
        self.secret = secretsmanager.Secret.from_secret_name_v2(self, "UrlSecret", secret_name)

    def environment(self, *, direct: bool = False) -> dict[str, str]:
        """The secret `{"url": DATABASE_URL}`: hookline.db reads its `url` key when present."""
        return {"HOOKLINE_DATABASE_SECRET_ARN": self.secret.secret_arn}

    def grant_connect(self, fn: lambda_.Function, *, direct: bool = False) -> None:
        """Secret read only: there is no VPC in the LocalStack variant."""
        self.secret.grant_read(_role(fn))


def _role(fn: lambda_.Function) -> iam.IRole:
    assert fn.role is not None
    return fn.role
