"""How functions authenticate to Postgres behind RDS Proxy (docs/decisions/0033)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from hookline.db import credentials_for
from hookline.settings import Settings

pytestmark = pytest.mark.unit

PROXY = "hookline-proxy.proxy-abc.us-east-1.rds.amazonaws.com"


def _iam_settings() -> Settings:
    return Settings.from_env(
        {
            "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
            "AWS_SECRET_ACCESS_KEY": "example",
            "HOOKLINE_DATABASE_HOST": PROXY,
            "HOOKLINE_DATABASE_IAM_USER": "hookline",
            "HOOKLINE_DATABASE_PROXIED": "true",
        }
    )


def test_iam_credentials_sign_a_token_for_the_proxy_and_hold_no_password(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "example")
    # Given a function configured for IAM authentication to the proxy
    credentials = credentials_for(_iam_settings())
    # When it opens a connection
    params = psycopg.conninfo.conninfo_to_dict(credentials.conninfo())
    # Then it connects to the proxy over TLS as the database user with a signed token
    assert params["host"] == PROXY and params["user"] == "hookline"
    assert params["dbname"] == "hookline"
    token = str(params["password"])
    assert token.startswith(f"{PROXY}:5432/?Action=connect")
    assert "DBUser=hookline" in token and "X-Amz-Signature=" in token
    # And its connections are the proxied kind (no automatic prepared statements)
    assert credentials.proxied


def test_the_proxy_certificate_is_verified_against_amazon_trust_services(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "example")
    # Given a function configured for IAM authentication to the proxy
    credentials = credentials_for(_iam_settings())
    # When it opens a connection
    params = psycopg.conninfo.conninfo_to_dict(credentials.conninfo())
    # Then the proxy's certificate must chain to a public root and name the endpoint
    assert params["sslmode"] == "verify-full"
    bundle = Path(str(params["sslrootcert"]))
    assert bundle.is_file()
    # And the bundle holds the root the proxy's ACM certificates chain to
    assert "Amazon Root CA 1" in bundle.read_text()


def test_a_database_url_is_used_as_given_and_never_re_read():
    credentials = credentials_for(Settings.from_env({"DATABASE_URL": "postgresql://x@h/db"}))
    assert credentials.conninfo() == "postgresql://x@h/db"
    credentials.refresh()
    assert credentials.conninfo() == "postgresql://x@h/db"
    assert not credentials.proxied
