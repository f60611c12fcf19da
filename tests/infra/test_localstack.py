"""The LocalStack variant: no VPC, RDS, proxy or WAF; the database URL comes from a secret."""

from __future__ import annotations

import pytest

from tests.infra.view import StackView, env_of

pytestmark = pytest.mark.infra


@pytest.mark.parametrize(
    "resource_type",
    [
        "AWS::EC2::VPC",
        "AWS::EC2::NatGateway",
        "AWS::EC2::EIP",
        "AWS::RDS::DBInstance",
        "AWS::RDS::DBProxy",
        "AWS::WAFv2::WebACL",
        "AWS::SecretsManager::Secret",
    ],
)
def test_no_paid_or_unsupported_resources(localstack: StackView, resource_type: str) -> None:
    localstack.template.resource_count_is(resource_type, 0)


def test_functions_read_the_url_secret_and_run_outside_a_vpc(localstack: StackView) -> None:
    for name, fn in localstack.functions().items():
        env = env_of(fn)
        assert "VpcConfig" not in fn["Properties"], name
        assert "HOOKLINE_DATABASE_HOST" not in env, name
        arn = str(env["HOOKLINE_DATABASE_SECRET_ARN"])
        assert ":secret:hookline/database-url" in arn, name


def test_secret_read_is_scoped_to_the_named_secret(localstack: StackView) -> None:
    for name in localstack.functions():
        statements = localstack.policy_statements(localstack.role_of(name))
        reads = [s for s in statements if "secretsmanager:GetSecretValue" in s["Action"]]
        # The database URL secret and no other (catch-up keys are read through the tenant-tagged
        # reader role, tests/infra/test_iam.py).
        [database] = reads
        assert ":secret:hookline/database-url-??????" in str(database["Resource"]), name


def test_outputs_have_no_database_or_egress_addresses(localstack: StackView) -> None:
    outputs = localstack.raw["Outputs"]
    assert "DeliveryEgressIps" not in outputs
    assert "DatabaseProxyEndpoint" not in outputs
    assert "InboundUrl" in outputs
