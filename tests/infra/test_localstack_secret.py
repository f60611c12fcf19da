"""`make deploy-localstack` stores DATABASE_URL in the shape hookline.db reads."""

from __future__ import annotations

import json

import boto3
import pytest
from moto import mock_aws

from infra.localstack_secret import put_database_url

pytestmark = pytest.mark.infra


@mock_aws
def test_creates_then_updates_the_url_secret() -> None:
    client = boto3.client("secretsmanager", region_name="us-east-1")
    put_database_url("hookline/database-url", "postgresql://a@db/one")
    put_database_url("hookline/database-url", "postgresql://a@db/two")
    value = client.get_secret_value(SecretId="hookline/database-url")["SecretString"]
    assert json.loads(value) == {"url": "postgresql://a@db/two"}
