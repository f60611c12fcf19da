"""`hookline api`: principals, sealing plaintext secrets, the OpenAPI document, and SigV4-signed
calls to a deployed API (here a local HTTP server that records what it got)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.management import principal_of

pytestmark = pytest.mark.integration


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
    from hookline.api.openapi import openapi_document

    code, out, _ = cli("api", "openapi", "--json")
    assert code == 0 and json.loads(out) == json.loads(json.dumps(openapi_document()))


class Recorder:
    """A loopback server that records each request and answers with canned JSON."""

    def __init__(self, answers: dict[str, tuple[int, bytes]]) -> None:
        self.seen: list[dict[str, str]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                recorder.seen.append(
                    {
                        **dict(self.headers),
                        "method": self.command,
                        "path": self.path,
                        "body": self.rfile.read(length).decode(),
                    }
                )
                status, answer = answers[self.command]
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            do_GET = do_POST = do_DELETE = _serve

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/live"

    def __enter__(self) -> Recorder:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def assert_sigv4(request: dict[str, str]) -> None:
    assert request["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=testing/")
    assert "/us-east-1/execute-api/aws4_request" in request["Authorization"]
    assert "X-Amz-Date" in request


def test_call_signs_with_sigv4_and_prints_the_answer(cli):
    answers = {"POST": (201, b'{"id": "ten_1", "name": "acme"}'), "DELETE": (200, b"{}")}
    with Recorder(answers) as api:
        code, out, _ = cli(
            "api", "call", "POST", "tenants", "--api", api.url, "--data", '{"name": "acme"}',
            "--json",
        )  # fmt: skip
        assert code == 0 and json.loads(out) == {"id": "ten_1", "name": "acme"}
        code, _, _ = cli("api", "call", "delete", "/v1/event-types/et_1", "--api", api.url)
        assert code == 0
    post, delete = api.seen
    assert_sigv4(post)
    assert json.loads(post["body"]) == {"name": "acme"}
    assert_sigv4(delete)
    assert (delete["method"], delete["path"]) == ("DELETE", "/live/v1/event-types/et_1")


def test_resource_commands_sign_their_requests_to_a_deployed_api(cli, monkeypatch):
    # Given a deployed API (here a loopback server) named by HOOKLINE_API_URL
    page = {"items": [{"id": "ten_1", "name": "acme", "group": "standard",
                       "created_at": "2026-01-01T00:00:00Z"}], "next_cursor": None}  # fmt: skip
    problem = {"type": "about:blank", "title": "Forbidden", "status": 403,
               "detail": "this principal is not allowed to use the Hookline API"}  # fmt: skip
    answers = {"GET": (200, json.dumps(page).encode()), "POST": (403, json.dumps(problem).encode())}
    with Recorder(answers) as api:
        monkeypatch.setenv("HOOKLINE_API_URL", api.url)
        # When the operator lists tenants, the request is SigV4-signed and the answer printed
        code, out, _ = cli("tenants", "list", "--limit", "5", "--json")
        assert code == 0 and json.loads(out) == page
        code, out, _ = cli("tenants", "list")
        assert "ten_1" in out and "acme" in out
        # And a refusal is one line on stderr, exit 1
        code, out, err = cli("tenants", "add", "acme")
    assert (code, out) == (1, "")
    assert err == "error: this principal is not allowed to use the Hookline API\n"
    request = api.seen[0]
    assert_sigv4(request)
    assert (request["method"], request["path"]) == ("GET", "/live/v1/tenants?limit=5")
    assert json.loads(api.seen[-1]["body"]) == {"name": "acme"}
