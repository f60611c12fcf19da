"""Create or update the LocalStack variant's database secret from $DATABASE_URL.

    AWS_ENDPOINT_URL=http://127.0.0.1:4566 python -m infra.localstack_secret hookline/database-url

The value is JSON `{"url": "<DATABASE_URL>"}`: hookline.db uses the `url` key of the secret
named by HOOKLINE_DATABASE_SECRET_ARN when it has one.
"""

from __future__ import annotations

import json
import os
import sys

import boto3


def put_database_url(secret_name: str, database_url: str) -> str:
    """Store `database_url` in the secret `secret_name` (created if missing); return its ARN."""
    client = boto3.client("secretsmanager")
    value = json.dumps({"url": database_url})
    try:
        arn: str = client.put_secret_value(SecretId=secret_name, SecretString=value)["ARN"]
    except client.exceptions.ResourceNotFoundException:
        arn = client.create_secret(Name=secret_name, SecretString=value)["ARN"]
    return arn


def main() -> None:
    """Entry point: the secret name is the only argument; the URL comes from the environment."""
    if len(sys.argv) != 2 or not os.environ.get("DATABASE_URL"):
        sys.exit("usage: DATABASE_URL=... python -m infra.localstack_secret SECRET_NAME")
    print(put_database_url(sys.argv[1], os.environ["DATABASE_URL"]))


if __name__ == "__main__":
    main()
