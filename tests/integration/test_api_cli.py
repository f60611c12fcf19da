"""`hookline api`: principals, sealing plaintext secrets, the OpenAPI document, and SigV4-signed
calls to a deployed API (here a local HTTP server that records what it got)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hookline.cli import main
from tests.support.management import principal_of

pytestmark = pytest.mark.integration


@pytest.fixture
def cli(management_env, capsys):
    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(argv))
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


def test_principals_scope_api_callers(cli, mgmt):
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    principal = principal_of(tenant["id"])
    assert mgmt.as_(principal).get("/v1/tenants").status == 403
    code, out, _ = cli("api", "principals", "add", principal, "--tenant", tenant["id"], "--json")
    assert code == 0 and json.loads(out)["scope"] == tenant["id"]
    assert [t["id"] for t in mgmt.as_(principal).get("/v1/tenants").json()["items"]] == [
        tenant["id"]
    ]
    code, out, _ = cli("api", "principals", "list", "--json")
    assert [p["principal"] for p in json.loads(out)] == [principal]
    assert cli("api", "principals", "remove", principal)[0] == 0
    assert mgmt.as_(principal).get("/v1/tenants").status == 403
    code, _, err = cli("api", "principals", "add", principal, "--tenant", "ten_nope")
    assert code != 0 and "ten_nope" in err


def test_encrypt_secrets_seals_plaintext_rows(cli, mgmt, db):
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    endpoint = mgmt.post(
        "/v1/endpoints", {"tenant_id": tenant["id"], "url": "https://93.184.216.34/h"}
    ).json()
    with db.connection() as conn:
        conn.execute("UPDATE endpoint_secrets SET secret = %s", (endpoint["secret"],))
    code, out, _ = cli("api", "encrypt-secrets", "--json")
    assert (code, json.loads(out)) == (0, {"sealed_rows": 1})


def test_openapi_prints_the_document(cli):
    from functions.api.handler import openapi_document

    code, out, _ = cli("api", "openapi", "--json")
    assert code == 0 and json.loads(out) == json.loads(json.dumps(openapi_document()))


def test_call_signs_with_sigv4_and_prints_the_answer(cli):
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            seen.append({**dict(self.headers), "body": self.rfile.read(length).decode()})
            answer = b'{"id": "ten_1", "name": "acme"}'
            self.send_response(201)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/live"
        code, out, _ = cli(
            "api", "call", "POST", "tenants", "--api", url, "--data", '{"name": "acme"}', "--json"
        )
    finally:
        server.shutdown()
    assert code == 0 and json.loads(out) == {"id": "ten_1", "name": "acme"}
    (request,) = seen
    assert request["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=testing/")
    assert "/execute-api/aws4_request" in request["Authorization"]
    assert "X-Amz-Date" in request and json.loads(request["body"]) == {"name": "acme"}
