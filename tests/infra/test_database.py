"""RDS PostgreSQL 16 (encrypted, backed up, protected) behind an RDS Proxy; migrations on
deploy run before the functions and the API are created or updated."""

from __future__ import annotations

import json

import pytest
from aws_cdk.assertions import Match

from tests.infra.view import StackView, env_of

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
                    "EngineVersion": Match.string_like_regexp(r"^16(\.\d+)?$"),
                    "StorageEncrypted": True,
                    "BackupRetentionPeriod": infra.db_backup_retention_days,
                    "DeletionProtection": infra.deletion_protection,
                    "PubliclyAccessible": False,
                    "DBName": "hookline",
                }
            ),
            "DeletionPolicy": "Snapshot",
        },
    )


def test_database_lives_in_the_isolated_subnets(aws: StackView) -> None:
    isolated = {k for k in aws.of_type("AWS::EC2::Subnet") if "db" in k.lower()}
    (group,) = aws.of_type("AWS::RDS::DBSubnetGroup").values()
    assert {s["Ref"] for s in group["Properties"]["SubnetIds"]} == isolated
    assert len(isolated) == 2


def test_credentials_are_a_rotated_secret(aws: StackView) -> None:
    # Two secrets: the database credentials (rotated) and the portal session key (by hand)
    secrets = aws.template.find_resources("AWS::SecretsManager::Secret")
    assert len(secrets) == 2
    assert len([k for k in secrets if "SessionKey" not in k]) == 1
    aws.template.resource_count_is("AWS::SecretsManager::RotationSchedule", 1)
    aws.template.has_resource_properties(
        "AWS::SecretsManager::RotationSchedule",
        {
            "RotationRules": {
                "ScheduleExpression": f"rate({aws.config.infrastructure.db_secret_rotation_days}"
                " days)"
            }
        },
    )


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
            assert "HOOKLINE_DATABASE_HOST" not in env
        else:
            assert "HOOKLINE_DATABASE_SECRET_ARN" not in env, name
            assert env["HOOKLINE_DATABASE_HOST"] == {"Fn::GetAtt": [proxy, "Endpoint"]}, name
            assert env["HOOKLINE_DATABASE_IAM_USER"] == "hookline", name
            assert env["HOOKLINE_DATABASE_PROXIED"] == "true", name


def test_only_the_proxy_rotation_and_migrate_reach_the_instance(aws: StackView) -> None:
    instance_sg = aws.logical_id("DatabaseInstanceSecurityGroup", "AWS::EC2::SecurityGroup")
    sources = [
        rule["Properties"]["SourceSecurityGroupId"]["Fn::GetAtt"][0]
        for rule in aws.of_type("AWS::EC2::SecurityGroupIngress").values()
        if rule["Properties"]["GroupId"] == {"Fn::GetAtt": [instance_sg, "GroupId"]}
    ]
    assert len(sources) == 3
    assert any("Proxy" in s for s in sources)
    assert any("Rotation" in s for s in sources)
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


def test_the_rds_log_export_and_the_rotation_function_logs_expire(aws: StackView) -> None:
    days = 30  # retention(config.log_retention_days) for the default 30
    assert aws.config.log_retention_days == days
    (retention,) = aws.of_type("Custom::LogRetention").values()
    assert retention["Properties"]["RetentionInDays"] == days
    assert "/postgresql" in json.dumps(retention["Properties"]["LogGroupName"])
    (app,) = aws.of_type("AWS::Serverless::Application").values()
    name = app["Properties"]["Parameters"]["functionName"]
    groups = {
        g["Properties"]["LogGroupName"]: g
        for g in aws.of_type("AWS::Logs::LogGroup").values()
        if isinstance(g["Properties"].get("LogGroupName"), str)
    }
    assert groups[f"/aws/lambda/{name}"]["Properties"]["RetentionInDays"] == days
