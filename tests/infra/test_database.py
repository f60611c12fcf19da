"""RDS PostgreSQL 16 (encrypted, backed up, protected once created) behind an RDS Proxy, its
password managed and rotated by RDS; migrations on deploy run before the functions and the API
are created or updated."""

from __future__ import annotations

import json

import pytest
from aws_cdk.assertions import Match

from hookline.config import HooklineConfig
from tests.infra.view import StackView, env_of, synthesize

pytestmark = pytest.mark.infra


def test_postgres_16_is_encrypted_backed_up_private_and_protected(aws: StackView) -> None:
    infra = aws.config.infrastructure
    aws.template.resource_count_is("AWS::RDS::DBInstance", 1)
    aws.template.has_resource(
        "AWS::RDS::DBInstance",
        {
            "Properties": Match.object_like(
                {
                    "Engine": "postgres",
                    # The major only: RDS picks (and upgrades) the minor (decision 0062).
                    "EngineVersion": "16",
                    "AutoMinorVersionUpgrade": True,
                    "StorageEncrypted": True,
                    "BackupRetentionPeriod": infra.db_backup_retention_days,
                    "PubliclyAccessible": False,
                    "DBName": "hookline",
                }
            ),
            "DeletionPolicy": "RetainExceptOnCreate",
        },
    )


def test_full_page_images_are_compressed_in_the_wal(aws: StackView) -> None:
    # Given the default stack: the instance uses a parameter group of its own
    (group_id, group) = next(iter(aws.of_type("AWS::RDS::DBParameterGroup").items()))
    (instance,) = aws.of_type("AWS::RDS::DBInstance").values()
    assert instance["Properties"]["DBParameterGroupName"] == {"Ref": group_id}
    # Then it compresses full-page images (decision 0094) and compiles no statement
    # (decision 0102), for the instance's own major version
    assert group["Properties"]["Family"] == "postgres16"
    assert group["Properties"]["Parameters"] == {"wal_compression": "on", "jit": "0"}


def test_the_wal_compression_follows_the_configuration() -> None:
    config = HooklineConfig.from_dict({"infrastructure": {"db_wal_compression": "lz4"}})
    (group,) = synthesize({}, config).of_type("AWS::RDS::DBParameterGroup").values()
    assert group["Properties"]["Parameters"] == {"wal_compression": "lz4", "jit": "0"}
    with pytest.raises(ValueError, match="db_wal_compression must be one of off, on, pglz"):
        HooklineConfig.from_dict({"infrastructure": {"db_wal_compression": "gzip"}})


def test_a_minor_engine_version_is_refused() -> None:
    with pytest.raises(ValueError, match="db_engine_version must be a major version"):
        HooklineConfig.from_dict({"infrastructure": {"db_engine_version": "16.13"}})


def test_database_lives_in_the_isolated_subnets(aws: StackView) -> None:
    isolated = {k for k in aws.of_type("AWS::EC2::Subnet") if "db" in k.lower()}
    (group,) = aws.of_type("AWS::RDS::DBSubnetGroup").values()
    assert {s["Ref"] for s in group["Properties"]["SubnetIds"]} == isolated
    assert len(isolated) == 2


def test_rds_manages_and_rotates_the_password_without_a_serverless_application(
    aws: StackView,
) -> None:
    # Given the default stack: no Serverless Application Repository app, no SAM transform (they
    # do not exist in eu-south-2, ap-southeast-4, ...), no rotation function of our own
    assert aws.of_type("AWS::Serverless::Application") == {}
    assert "Transform" not in aws.raw
    aws.template.resource_count_is("AWS::SecretsManager::RotationSchedule", 0)
    # Then RDS keeps the password in the secret it creates and rotates
    (instance,) = aws.of_type("AWS::RDS::DBInstance").values()
    assert instance["Properties"]["ManageMasterUserPassword"] is True
    assert "MasterUserPassword" not in instance["Properties"]
    # and the only secret the stack makes itself is the portal session key
    secrets = aws.of_type("AWS::SecretsManager::Secret")
    assert [k for k in secrets if "SessionKey" not in k] == []


def test_nothing_blocks_a_first_create_rollback(aws: StackView) -> None:
    # Given the resources CloudFormation deletes when a first create fails
    for logical_id, resource in aws.resources.items():
        # Then none is protected from deletion at create
        properties = resource.get("Properties", {})
        assert properties.get("DeletionProtection") in (None, False, "INACTIVE"), logical_id
        # and none is kept by a failed create, except the account-wide API Gateway role
        if resource.get("DeletionPolicy") == "Retain":
            assert resource["Type"] in ("AWS::IAM::Role", "AWS::ApiGateway::Account"), logical_id
    # The database is protected only once everything else exists
    (protect_id, protect) = next(
        (k, v) for k, v in aws.of_type("Custom::AWS").items() if "DeletionProtection" in k
    )
    assert '"DeletionProtection\\":true' in json.dumps(protect["Properties"]["Create"])
    others = {
        k
        for k, v in aws.resources.items()
        if k != protect_id and not k.startswith("AWS679f53fac002430cb0da5b7982bd2287")
    }
    missing = others - set(protect.get("DependsOn", []))
    assert missing == set()


def test_proxy_requires_tls_and_iam_and_keeps_the_secret_itself(aws: StackView) -> None:
    aws.template.has_resource_properties(
        "AWS::RDS::DBProxy",
        {
            "EngineFamily": "POSTGRESQL",
            "RequireTLS": True,
            "Auth": [Match.object_like({"AuthScheme": "SECRETS", "IAMAuth": "REQUIRED"})],
        },
    )


def test_functions_connect_through_the_proxy_with_iam_except_migrate(aws: StackView) -> None:
    # A rotation changes the password: only migrate, which reconnects once on refusal,
    # holds it; every other function signs an IAM token per connection (decision 0033).
    proxy = aws.logical_id("Proxy", "AWS::RDS::DBProxy")
    for name, fn in aws.functions().items():
        env = env_of(fn)
        if "Migrate" in name:
            # migrations go straight to the instance: the proxy may still be registering
            assert "HOOKLINE_DATABASE_SECRET_ARN" in env
            instance = aws.logical_id("DatabaseInstance", "AWS::RDS::DBInstance")
            assert env["HOOKLINE_DATABASE_HOST"] == {"Fn::GetAtt": [instance, "Endpoint.Address"]}
            assert env["HOOKLINE_DATABASE_NAME"] == "hookline"
        else:
            assert "HOOKLINE_DATABASE_SECRET_ARN" not in env, name
            assert env["HOOKLINE_DATABASE_HOST"] == {"Fn::GetAtt": [proxy, "Endpoint"]}, name
            assert env["HOOKLINE_DATABASE_IAM_USER"] == "hookline", name
            assert env["HOOKLINE_DATABASE_PROXIED"] == "true", name


def test_only_the_proxy_and_migrate_reach_the_instance(aws: StackView) -> None:
    instance_sg = aws.logical_id("DatabaseInstanceSecurityGroup", "AWS::EC2::SecurityGroup")
    sources = [
        rule["Properties"]["SourceSecurityGroupId"]["Fn::GetAtt"][0]
        for rule in aws.of_type("AWS::EC2::SecurityGroupIngress").values()
        if rule["Properties"]["GroupId"] == {"Fn::GetAtt": [instance_sg, "GroupId"]}
    ]
    assert len(sources) == 2
    assert any("Proxy" in s for s in sources)
    assert any("Migrate" in s for s in sources)


def test_every_service_function_may_reach_the_proxy(aws: StackView) -> None:
    proxy_sg = aws.logical_id("ProxySecurityGroup", "AWS::EC2::SecurityGroup")
    allowed = {
        rule["Properties"]["SourceSecurityGroupId"]["Fn::GetAtt"][0]
        for rule in aws.of_type("AWS::EC2::SecurityGroupIngress").values()
        if rule["Properties"]["GroupId"] == {"Fn::GetAtt": [proxy_sg, "GroupId"]}
        and rule["Properties"]["FromPort"] == 5432
    }
    for name, fn in aws.functions().items():
        groups = {g["Fn::GetAtt"][0] for g in fn["Properties"]["VpcConfig"]["SecurityGroupIds"]}
        assert bool(groups & allowed) == ("Migrate" not in name), name


def test_migrations_run_on_deploy_after_the_database_before_the_code(aws: StackView) -> None:
    (trigger_id, trigger) = next(iter(aws.of_type("Custom::Trigger").items()))
    migrate, _ = aws.function("Migrate")
    assert trigger["Properties"]["InvocationType"] == "RequestResponse"
    assert trigger["Properties"]["ExecuteOnHandlerChange"] is True
    version = trigger["Properties"]["HandlerArn"]["Ref"]
    assert aws.resources[version]["Properties"]["FunctionName"] == {"Ref": migrate}
    assert aws.logical_id("DatabaseInstance", "AWS::RDS::DBInstance") in trigger["DependsOn"]
    # Every other function and the API deployment wait for the migrations.
    for name in [*[k for k in aws.functions() if "Migrate" not in k]]:
        assert trigger_id in aws.resources[name].get("DependsOn", []), name
    deployment = aws.logical_id("Deployment", "AWS::ApiGateway::Deployment")
    assert trigger_id in aws.resources[deployment].get("DependsOn", [])


def test_the_rds_log_export_expires(aws: StackView) -> None:
    days = 30  # retention(config.log_retention_days) for the default 30
    assert aws.config.log_retention_days == days
    (retention,) = aws.of_type("Custom::LogRetention").values()
    assert retention["Properties"]["RetentionInDays"] == days
    assert "/postgresql" in json.dumps(retention["Properties"]["LogGroupName"])
