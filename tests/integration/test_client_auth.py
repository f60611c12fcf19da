"""Both clients authenticate as deployments expect: bearer keys as `Authorization: Bearer`,
and SigV4 for `execute-api` whose signature botocore, acting as API Gateway, recomputes from
the request as it arrived (method, path, query, signed headers, body)."""

from __future__ import annotations

import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from hookline_client.api.deliveries import list_deliveries
from hookline_client.api.tenants import create_tenant
from hookline_client.auth import bearer_client, sigv4_client
from hookline_client.models import TenantCreate

pytestmark = pytest.mark.integration

TS = Path(__file__).resolve().parents[2] / "clients" / "typescript"
KEY_ID, SECRET, REGION = "AKIDEXAMPLE", "test-secret-key", "eu-west-1"


@dataclass
class Received:
    """One request as it arrived."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Recorder:
    """A loopback stand-in for API Gateway: records each request, answers 418 (no body)."""

    server: ThreadingHTTPServer
    received: list[Received] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def requests(self) -> list[Received]:
        return list(self.received)


@pytest.fixture
def api() -> Iterator[Recorder]:
    """A recorder on loopback for the test."""

    class Handler(BaseHTTPRequestHandler):
        def record(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            recorder.received.append(
                Received(self.command, self.path, dict(self.headers.items()), body)
            )
            self.send_response(418)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = record

        def log_message(self, format: str, *args: object) -> None:
            pass

    recorder = Recorder(ThreadingHTTPServer(("127.0.0.1", 0), Handler))
    threading.Thread(target=recorder.server.serve_forever, daemon=True).start()
    try:
        yield recorder
    finally:
        recorder.server.shutdown()
        recorder.server.server_close()


def signature_is_valid(sink: Recorder, received: Received) -> bool:
    """What API Gateway does: recompute the SigV4 signature over what arrived."""
    headers = {k.lower(): v for k, v in received.headers.items()}
    authorization = headers["authorization"]
    assert authorization.startswith(f"AWS4-HMAC-SHA256 Credential={KEY_ID}/")
    assert f"/{REGION}/execute-api/aws4_request" in authorization
    fields = dict(part.split("=", 1) for part in authorization.split(" ", 1)[1].split(", "))
    signed = {name: headers[name] for name in fields["SignedHeaders"].split(";")}
    request = AWSRequest(
        method=received.method,
        url=sink.url(received.path),
        data=received.body,
        headers=signed,
    )
    request.context["timestamp"] = headers["x-amz-date"]
    signer = SigV4Auth(Credentials(KEY_ID, SECRET), "execute-api", REGION)
    expected = signer.signature(
        signer.string_to_sign(request, signer.canonical_request(request)), request
    )
    return fields["Signature"] == expected


def test_the_python_client_signs_requests_with_sigv4(api: Recorder) -> None:
    # Given the Python client for an IAM-fronted deployment
    client = sigv4_client(api.url(""), region=REGION, credentials=Credentials(KEY_ID, SECRET))
    # When it creates a tenant and lists deliveries with a query
    create_tenant.sync_detailed(client=client, body=TenantCreate(name="signed"))
    list_deliveries.sync_detailed(client=client, limit=2, state="failed")
    # Then API Gateway would accept both signatures
    first, second = api.requests()
    assert first.body and signature_is_valid(api, first)
    assert second.path.startswith("/v1/deliveries?")
    assert signature_is_valid(api, second)


def test_a_tampered_body_breaks_the_signature(api: Recorder) -> None:
    # Given a request the Python client signed
    client = sigv4_client(api.url(""), region=REGION, credentials=Credentials(KEY_ID, SECRET))
    create_tenant.sync_detailed(client=client, body=TenantCreate(name="signed"))
    (received,) = api.requests()
    # When its body is changed on the way
    received.body = received.body.replace(b"signed", b"forged")
    # Then the signature no longer holds
    assert not signature_is_valid(api, received)


def test_the_typescript_client_signs_requests_with_sigv4(api: Recorder, tmp_path: Path) -> None:
    # Given the TypeScript client compiled, with SigV4 credentials
    node = shutil.which("node")
    assert node, "node is required (Node 20: .ci/run installs it)"
    tsc = TS / "node_modules" / ".bin" / "tsc"
    subprocess.run([str(tsc), "-p", str(TS), "--outDir", str(tmp_path)], check=True, timeout=120)
    (tmp_path / "node_modules").symlink_to(TS / "node_modules")
    (tmp_path / "package.json").write_text('{"type": "module"}')
    # When it sends a POST with a body and a GET with a query
    subprocess.run(
        [node, str(tmp_path / "test" / "sigv4.js")],
        env={"HOOKLINE_URL": api.url(""), "PATH": str(Path(node).parent)},
        check=True,
        timeout=60,
    )
    # Then botocore, as API Gateway, accepts both signatures
    first, second = api.requests()
    assert signature_is_valid(api, first)
    assert signature_is_valid(api, second)


def test_the_python_client_sends_bearer_keys(api: Recorder) -> None:
    # Given the Python client with a tenant principal's key
    client = bearer_client(api.url(""), "hk_tenant_key")
    # When it calls the API
    create_tenant.sync_detailed(client=client, body=TenantCreate(name="keyed"))
    # Then the key is sent as a bearer token
    (received,) = api.requests()
    assert {k.lower(): v for k, v in received.headers.items()}["authorization"] == (
        "Bearer hk_tenant_key"
    )
