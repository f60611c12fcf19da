"""Database password rotation (day 30): a rotated password reaches every new connection.

The stack rotates the database secret every 30 days. A function that built its connection
string once would be refused on every new connection after a rotation; these tests change the
Postgres role's password and the emulated secret in the middle of a run.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

import boto3
import psycopg
import pytest
from psycopg import sql

from hookline.db import reset_database
from tests.integration.conftest import STRIPE_SECRET
from tests.support.aws import REGION, reset_moto
from tests.support.lambdas import ApiClient
from tests.support.signers import stripe_event, stripe_headers

pytestmark = pytest.mark.integration


class RotatingRole:
    """A login role that authenticates by password (scram), and its emulated RDS secret."""

    def __init__(self, admin_url: str, database_url: str, moto_endpoint: str) -> None:
        self.admin_url = admin_url
        self.name = f"hl_rotating_{os.getpid()}"
        params = psycopg.conninfo.conninfo_to_dict(database_url)
        self.dbname = str(params["dbname"])
        self.host, self.port = str(params.get("host", "127.0.0.1")), int(params.get("port", 5432))
        self.secrets = boto3.client(
            "secretsmanager", endpoint_url=moto_endpoint, region_name=REGION
        )
        self.arn = ""

    def create(self, password: str, database_url: str) -> None:
        role = sql.Identifier(self.name)
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(role))
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(role, password))
            hba = conn.execute("SHOW hba_file").fetchone()
            assert hba is not None
            self._require_password(str(hba[0]))
            conn.execute("SELECT pg_reload_conf()")
        with psycopg.connect(database_url, autocommit=True) as conn:
            for kind in ("TABLES", "SEQUENCES", "FUNCTIONS"):
                conn.execute(
                    sql.SQL("GRANT ALL ON ALL {} IN SCHEMA public TO {}").format(
                        sql.SQL(kind), role
                    )
                )
        self.arn = self.secrets.create_secret(
            Name=f"hookline/db/{self.name}", SecretString=self._secret(password)
        )["ARN"]

    def rotate(self, password: str) -> None:
        """What the rotation function does: a new password on the role, then in the secret."""
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(self.name), password)
            )
        self.secrets.put_secret_value(SecretId=self.arn, SecretString=self._secret(password))

    def end_sessions(self) -> int:
        """End the role's connections, as connection lifetimes and restarts do in a month:
        the pool must open new ones."""
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                (self.name,),
            ).fetchall()
            # Until the backends are gone their sockets may still look healthy to the pool's
            # check; a real rotation ends no session, so wait rather than race it.
            for _ in range(100):
                left = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE usename = %s", (self.name,)
                ).fetchone()
                if not left or left[0] == 0:
                    break
                time.sleep(0.05)
        return len(rows)

    def drop(self, database_url: str) -> None:
        role = sql.Identifier(self.name)
        self.end_sessions()
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP OWNED BY {}").format(role))
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(role))

    def _secret(self, password: str) -> str:
        # The fields of an RDS managed secret.
        return json.dumps(
            {"engine": "postgres", "username": self.name, "password": password,
             "host": self.host, "port": self.port, "dbname": self.dbname}
        )  # fmt: skip

    def _require_password(self, hba_file: str) -> None:
        line = f"host all {self.name} 127.0.0.1/32 scram-sha-256\n"
        with open(hba_file) as f:
            current = f.read()
        if line not in current:
            with open(hba_file, "w") as f:
                f.write(line + current)


@pytest.fixture
def rotating_role(
    pg_admin_url: str, database_url: str, moto_endpoint: str
) -> Iterator[RotatingRole]:
    reset_moto(moto_endpoint)
    role = RotatingRole(pg_admin_url, database_url, moto_endpoint)
    with psycopg.connect(pg_admin_url) as conn:
        row = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
    if not row or not row[0]:
        pytest.skip("needs a superuser to create a password role and edit pg_hba.conf")
    role.create("first-password", database_url)
    try:
        yield role
    finally:
        reset_database()
        role.drop(database_url)


@pytest.fixture
def receiver_on_secret(
    rotating_role: RotatingRole, moto_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> ApiClient:
    """The receiver as deployed with the password secret: no DATABASE_URL, the secret's ARN."""
    monkeypatch.setenv("DATABASE_URL", "")
    monkeypatch.setenv("HOOKLINE_DATABASE_SECRET_ARN", rotating_role.arn)
    monkeypatch.setenv("HOOKLINE_DATABASE_SSLMODE", "disable")  # the test server has no TLS
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    monkeypatch.delenv("HOOKLINE_FANOUT_FUNCTION", raising=False)
    reset_database()
    from functions.receiver.handler import lambda_handler

    return ApiClient(lambda_handler)


def _post(api: ApiClient, source: dict[str, str], n: int, prefix: str) -> list[int]:
    statuses = []
    for i in range(n):
        body = stripe_event(f"evt_{prefix}_{i}")
        result = api.post(source["path"], headers=stripe_headers(STRIPE_SECRET, body), body=body)
        statuses.append(result.status)
    return statuses


def _events(db: Any) -> int:
    with db.connection() as conn:
        row = conn.execute("SELECT count(*) AS n FROM events").fetchone()
    return int(row["n"])


def test_after_a_rotation_new_connections_use_the_new_password(
    receiver_on_secret, rotating_role, stripe_source, db
):
    # Given a warm receiver that read the secret and accepted events
    assert _post(receiver_on_secret, stripe_source, 3, "before") == [200, 200, 200]
    # When the secret rotates (the role's password, then the secret) and the pooled
    # connections end, so the next requests need new connections
    rotating_role.rotate("second-password")
    assert rotating_role.end_sessions() >= 1
    # Then the next requests succeed: the refused password re-read the secret
    assert _post(receiver_on_secret, stripe_source, 5, "after") == [200] * 5
    # And none was lost
    assert _events(db) == 8


def test_a_second_rotation_in_the_same_container_is_picked_up_too(
    receiver_on_secret, rotating_role, stripe_source, db
):
    assert _post(receiver_on_secret, stripe_source, 1, "a") == [200]
    for n, password in enumerate(("second-password", "third-password")):
        rotating_role.rotate(password)
        rotating_role.end_sessions()
        assert _post(receiver_on_secret, stripe_source, 2, f"r{n}") == [200, 200]
    assert _events(db) == 5


def test_the_migrate_function_reconnects_with_the_rotated_password(
    rotating_role, moto_endpoint, monkeypatch
):
    # Given a migrate function whose container read the secret before a rotation
    monkeypatch.setenv("DATABASE_URL", "")
    monkeypatch.setenv("HOOKLINE_DATABASE_SECRET_ARN", rotating_role.arn)
    monkeypatch.setenv("HOOKLINE_DATABASE_SSLMODE", "disable")
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    from hookline.db import connect_refreshing, credentials_for
    from hookline.migrate import current_version
    from hookline.settings import Settings

    credentials = credentials_for(Settings.from_env())
    assert connect_refreshing(credentials, current_version) > 0
    # When the password rotates
    rotating_role.rotate("second-password")
    # Then its next connection is refused once, re-reads the secret, and succeeds
    assert connect_refreshing(credentials, current_version) > 0


def test_a_connection_refused_after_another_one_re_read_the_secret_still_reconnects(
    rotating_role, moto_endpoint, monkeypatch
):
    # Given a container's credentials read before a rotation
    monkeypatch.setenv("DATABASE_URL", "")
    monkeypatch.setenv("HOOKLINE_DATABASE_SECRET_ARN", rotating_role.arn)
    monkeypatch.setenv("HOOKLINE_DATABASE_SSLMODE", "disable")
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    from hookline.db import connect_refreshing, credentials_for
    from hookline.settings import Settings

    credentials = credentials_for(Settings.from_env())
    credentials.conninfo()
    rotating_role.rotate("second-password")
    attempts: list[str] = []

    def connect(conninfo: str) -> int:
        if not attempts:
            # Another pool worker is refused first and re-reads the secret, while this one
            # is still connecting with the old password.
            credentials.refresh()
        attempts.append(conninfo)
        with psycopg.connect(conninfo) as conn:
            row = conn.execute("SELECT 1").fetchone()
        return int(row[0]) if row else 0

    # When this connection is refused
    # Then it retries with the credentials the other worker read, and connects
    assert connect_refreshing(credentials, connect) == 1
    assert len(attempts) == 2 and attempts[0] != attempts[1]
