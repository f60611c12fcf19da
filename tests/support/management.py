"""The management API handler called in-process as API Gateway would, with an IAM caller per
request (operator, or scoped to a tenant through `api_principals`)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlencode

import pytest

from hookline.db import Database, reset_database
from hookline.repositories import api as api_repo
from hookline_dev.local.apigw import LocalContext, build_rest_event
from tests.support.lambdas import HttpResult

OPERATOR = "arn:aws:iam::123456789012:role/hookline-operator"


def principal_of(tenant_id: str) -> str:
    """The IAM role a test maps to one tenant."""
    return f"arn:aws:iam::123456789012:role/tenant-{tenant_id}"


class ManagementClient:
    """JSON requests to the management API as one caller."""

    def __init__(self, handler: Any, identity: str | None = OPERATOR) -> None:
        self.handler = handler
        self.identity = identity

    def as_(self, identity: str | None) -> ManagementClient:
        """The same API, called by another principal."""
        return ManagementClient(self.handler, identity)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        raw: bytes | None = None,
    ) -> HttpResult:
        data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        hdrs = (
            {"Content-Type": "application/json", **(headers or {})} if data else dict(headers or {})
        )
        query = urlencode({k: v for k, v in (params or {}).items() if v is not None})
        event = build_rest_event(method, path, hdrs, data, query=query, identity_arn=self.identity)
        response = self.handler(event, LocalContext(function_name="api"))
        text = response.get("body") or ""
        payload = base64.b64decode(text) if response.get("isBase64Encoded") else text.encode()
        merged = dict(response.get("headers") or {})
        for k, values in (response.get("multiValueHeaders") or {}).items():
            merged[k] = values[-1]
        return HttpResult(response["statusCode"], merged, payload)

    def get(self, path: str, **params: Any) -> HttpResult:
        return self.request("GET", path, params=params)

    def post(self, path: str, body: Any = None, **kwargs: Any) -> HttpResult:
        return self.request("POST", path, body, **kwargs)

    def patch(self, path: str, body: Any = None, **kwargs: Any) -> HttpResult:
        return self.request("PATCH", path, body, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> HttpResult:
        return self.request("DELETE", path, **kwargs)


@pytest.fixture
def management_env(
    database_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> Iterator[None]:
    """The API's settings on this test's database: the operator role, a local master key."""
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("HOOKLINE_OPERATOR_PRINCIPALS", OPERATOR)
    monkeypatch.setenv("HOOKLINE_LOCAL_KEY_FILE", str(tmp_path / "master.key"))
    monkeypatch.setenv("HOOKLINE_ALLOW_PRIVATE_TARGETS", "0")
    monkeypatch.delenv("HOOKLINE_FANOUT_FUNCTION", raising=False)
    monkeypatch.delenv("HOOKLINE_REPLAY_FUNCTION", raising=False)
    monkeypatch.delenv("HOOKLINE_LOCAL_MODE", raising=False)
    monkeypatch.delenv("HOOKLINE_KMS_KEY_ID", raising=False)
    monkeypatch.delenv("HOOKLINE_API_KEY", raising=False)
    reset_database()
    yield
    from hookline.replay import wait_for_local_replays

    wait_for_local_replays(30)  # replays created through the API run in threads locally
    reset_database()


@pytest.fixture
def mgmt(management_env: None) -> ManagementClient:
    """The management API, called by an operator."""
    from functions.api.handler import lambda_handler

    return ManagementClient(lambda_handler)


@pytest.fixture
def cli(management_env: None, capsys: pytest.CaptureFixture[str]) -> Any:
    """`hookline …` in this process, as an operator: (exit code, stdout, stderr)."""
    from hookline_dev.cli import main

    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()  # drop what earlier steps printed
        code = main(list(argv))
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


@pytest.fixture
def replays_api(
    mgmt: ManagementClient, sqs: Any, moto_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ManagementClient]:
    """The management API with the group queues on moto (replays enqueue there); local
    replays run in threads, all finished before the test ends."""
    from hookline import replay as replay_service
    from hookline.config import HooklineConfig
    from hookline.runtime import reset_runtime
    from hookline.settings import get_settings
    from hookline_dev.local.queues import ensure_queues

    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    get_settings.cache_clear()
    reset_runtime()
    ensure_queues(sqs, HooklineConfig())
    yield mgmt
    assert replay_service.wait_for_local_replays(30), "a replay thread is still running"
    reset_runtime()


def scope_principal(db: Database, principal: str, scope: str) -> None:
    """Map an IAM principal to a tenant (or `*`)."""
    with db.connection() as conn:
        api_repo.upsert_principal(conn, principal, scope)


def as_tenant(client: ManagementClient, db: Database, tenant_id: str) -> ManagementClient:
    """The client, called by a principal scoped to `tenant_id`."""
    principal = principal_of(tenant_id)
    scope_principal(db, principal, tenant_id)
    return client.as_(principal)


def key_principal_for(key: str) -> str:
    """The principal of a local bearer key."""
    from hookline.management.access import key_principal

    return key_principal(key)
