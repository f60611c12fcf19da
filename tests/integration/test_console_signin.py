"""Operators sign in to the console through Cognito's hosted UI: the console function is driven
as a REST API on its own execute-api host would call it (stage `live` in every browser path),
a real loopback server plays the user pool's token endpoint and JWKS, and moto's cognito-idp
issues real pool tokens for the last tests."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlsplit

import boto3
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from hookline.config import HooklineConfig
from hookline.console import cognito
from hookline.db import reset_database
from hookline.settings import get_settings
from hookline_dev.local.apigw import LocalContext, build_rest_event
from tests.support import operator as ops
from tests.support.aws import REGION

pytestmark = pytest.mark.integration

POOL_ID = f"{REGION}_ConsoleTest"
CLIENT_ID = "console-client-id"
HOST = "abc123.execute-api.us-east-1.amazonaws.com"
URL_HOST = "xyz789.lambda-url.us-east-1.on.aws"
ISSUER = f"https://cognito-idp.{REGION}.amazonaws.com/{POOL_ID}"
KID = "test-key-1"


@dataclass
class FakeUserPool:
    """The hosted UI's token endpoint and the pool's JWKS, on loopback."""

    url: str
    key: rsa.RSAPrivateKey
    codes: dict[str, str] = field(default_factory=dict)  # authorization code -> ID token
    exchanges: list[dict[str, str]] = field(default_factory=list)

    def id_token(self, **overrides: Any) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "sub": "5f1c-operator", "email": "ops@example.com", "aud": CLIENT_ID,
            "iss": ISSUER, "token_use": "id", "iat": now, "exp": now + 3600,
            "cognito:groups": ["operators"],
        }  # fmt: skip
        key = overrides.pop("signing_key", None) or self.key
        claims.update(overrides)
        claims = {k: v for k, v in claims.items() if v is not None}
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": KID})


@pytest.fixture
def user_pool() -> Iterator[FakeUserPool]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key())), "kid": KID}
    state: dict[str, FakeUserPool] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: Any) -> None:
            pass

        def answer(self, status: int, doc: dict[str, Any]) -> None:
            body = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self.answer(200, {"keys": [jwk]} if self.path == "/jwks.json" else {})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            form = {k: v[-1] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            pool = state["pool"]
            pool.exchanges.append(form)
            token = pool.codes.pop(form.get("code", ""), None)
            if self.path != "/oauth2/token" or token is None:
                self.answer(400, {"error": "invalid_grant"})
            else:
                self.answer(200, {"id_token": token, "access_token": "a", "token_type": "Bearer"})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    pool = FakeUserPool(f"http://127.0.0.1:{server.server_address[1]}", key)
    state["pool"] = pool
    yield pool
    server.shutdown()
    server.server_close()


class Browser:
    """The console function behind a REST API's stage (or its own function URL), with a
    cookie jar."""

    def __init__(self, shape: str = "rest") -> None:
        from functions.console.handler import lambda_handler

        self.handler = lambda_handler
        self.shape = shape
        self.cookies: dict[str, str] = {}
        self.set_cookies: dict[str, str] = {}  # name -> the last Set-Cookie line for it

    def get(self, path: str, query: str = "") -> tuple[int, dict[str, str], str]:
        event = self._rest(path, query) if self.shape == "rest" else self._url(path, query)
        answer = self.handler(event, LocalContext(function_name="console"))
        merged: dict[str, str] = {}
        for line in answer.get("cookies") or []:  # a function URL's answer
            self._keep(line)
        for name, values in (answer.get("multiValueHeaders") or {}).items():
            if name.lower() == "set-cookie":
                for line in values:
                    self._keep(line)
            else:
                merged[name] = values[-1]
        merged.update(answer.get("headers") or {})
        return answer["statusCode"], merged, answer.get("body") or ""

    def _rest(self, path: str, query: str) -> dict[str, Any]:
        headers = {"Host": HOST, "X-Forwarded-Proto": "https"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        return build_rest_event("GET", path, headers, query=query, stage="live")

    def _url(self, path: str, query: str) -> dict[str, Any]:
        return {
            "version": "2.0",
            "rawPath": path,
            "rawQueryString": query,
            "headers": {"host": URL_HOST, "x-forwarded-proto": "https"},
            "cookies": [f"{k}={v}" for k, v in self.cookies.items()] or None,
            "queryStringParameters": dict(parse_qsl(query)) or None,
            "requestContext": {
                "domainName": URL_HOST,
                "requestId": "req-1",
                "http": {"method": "GET", "path": path, "sourceIp": "203.0.113.9"},
            },
            "body": None,
            "isBase64Encoded": False,
        }

    def _keep(self, line: str) -> None:
        name, _, rest = line.partition("=")
        value = rest.split(";", 1)[0]
        self.set_cookies[name] = line
        if "Max-Age=0" in line or not value:
            self.cookies.pop(name, None)
        else:
            self.cookies[name] = value


@pytest.fixture
def browser(database_url: str, user_pool: FakeUserPool, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("HOOKLINE_PORTAL_SESSION_KEY", "test-session-key-" + "k" * 24)
    monkeypatch.setenv("HOOKLINE_COGNITO_USER_POOL_ID", POOL_ID)
    monkeypatch.setenv("HOOKLINE_COGNITO_CLIENT_ID", CLIENT_ID)
    monkeypatch.setenv("HOOKLINE_COGNITO_DOMAIN", user_pool.url)
    monkeypatch.setenv("HOOKLINE_COGNITO_JWKS_URL", f"{user_pool.url}/jwks.json")
    monkeypatch.delenv("HOOKLINE_LOCAL_MODE", raising=False)
    get_settings.cache_clear()
    reset_database()
    yield Browser()
    reset_database()
    get_settings.cache_clear()


def start_sign_in(browser: Browser, path: str = "/console/tenants") -> dict[str, str]:
    """Open a console page without a session: the hosted UI's query it is sent to."""
    status, headers, _ = browser.get(path)
    assert status == 302
    location = urlsplit(headers["Location"])
    return {k: v[-1] for k, v in parse_qs(location.query).items()} | {"at": location.path}


def callback(browser: Browser, pool: FakeUserPool, token: str, state: str):
    pool.codes["the-code"] = token
    return browser.get("/console/callback", query=f"code=the-code&state={state}")


def test_an_operator_signs_in_through_the_hosted_ui_and_sees_the_console(
    browser: Browser, user_pool: FakeUserPool, db
) -> None:
    ops.add_tenant(db, HooklineConfig(), name="acme-corp", group=None)
    # Given an operator opening a console page without a session
    sent = start_sign_in(browser)
    # Then they are sent to the hosted UI with the code flow, PKCE and the stage's callback
    assert sent["at"] == "/oauth2/authorize"
    assert sent["response_type"] == "code" and sent["client_id"] == CLIENT_ID
    assert sent["redirect_uri"] == f"https://{HOST}/live/console/callback"
    assert sent["code_challenge_method"] == "S256"
    attempt = browser.set_cookies["hl_signin"]
    assert "SameSite=Lax" in attempt and "HttpOnly" in attempt and "Path=/live/console" in attempt

    # When Cognito sends them back with a code
    status, _, body = callback(browser, user_pool, user_pool.id_token(), sent["state"])

    # Then the code was exchanged with the attempt's verifier, and a session cookie is set
    assert status == 200, body
    exchange = user_pool.exchanges[-1]
    assert exchange["grant_type"] == "authorization_code"
    assert exchange["redirect_uri"] == sent["redirect_uri"]
    digest = hashlib.sha256(exchange["code_verifier"].encode()).digest()
    assert base64.urlsafe_b64encode(digest).decode().rstrip("=") == sent["code_challenge"]
    session = browser.set_cookies["hl_operator"]
    for attribute in ("HttpOnly", "Secure", "SameSite=Strict", "Path=/live/console"):
        assert attribute in session
    assert 'href="/live/console/tenants"' in body
    assert "hl_signin" not in browser.cookies

    # And the page they asked for opens, its links under the stage
    status, _, body = browser.get("/console/tenants")
    assert status == 200
    assert "acme-corp" in body
    assert 'href="/live/console/events"' in body
    assert 'src="/live/console/static/' in body
    # With a way out in the header
    assert 'href="/live/console/signout"' in body


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        ({"cognito:groups": ["readers"]}, 403),  # signed in, but not an operator
        ({"cognito:groups": None}, 403),
        ({"signing_key": "other"}, 401),  # forged: same kid, another key
        ({"exp": int(time.time()) - 60}, 401),  # expired beyond the clock-skew leeway
        ({"aud": "another-client"}, 401),
        ({"iss": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Other"}, 401),
        ({"token_use": "access"}, 401),
    ],
    ids=["not-in-group", "no-groups", "forged", "expired", "audience", "issuer", "access-token"],
)
def test_a_token_that_does_not_prove_an_operator_opens_nothing(
    browser: Browser, user_pool: FakeUserPool, claims: dict[str, Any], expected: int
) -> None:
    if claims.get("signing_key") == "other":
        claims = {"signing_key": rsa.generate_private_key(public_exponent=65537, key_size=2048)}
    sent = start_sign_in(browser)
    status, _, body = callback(browser, user_pool, user_pool.id_token(**claims), sent["state"])
    assert status == expected
    assert "hl_operator" not in browser.cookies
    if expected == 403:
        assert "operator group" in body
    # And the console still sends them to sign in
    assert browser.get("/console/tenants")[0] == 302


def test_a_callback_not_started_by_this_browser_or_an_edited_session_is_refused(
    browser: Browser, user_pool: FakeUserPool
) -> None:
    # A callback whose state is not the attempt's (login CSRF) exchanges nothing
    start_sign_in(browser)
    status, _, _ = callback(browser, user_pool, user_pool.id_token(), "someone-elses-state")
    assert status == 401
    assert user_pool.exchanges == []
    # A code the token endpoint refuses
    sent = start_sign_in(browser)
    status, _, _ = browser.get("/console/callback", query=f"code=unknown&state={sent['state']}")
    assert status == 401
    # A session cookie edited by hand is no session
    sent = start_sign_in(browser)
    assert callback(browser, user_pool, user_pool.id_token(), sent["state"])[0] == 200
    browser.cookies["hl_operator"] = browser.cookies["hl_operator"][:-3] + "AAA"
    assert browser.get("/console/tenants")[0] == 302


def test_the_portal_is_not_behind_the_operator_sign_in(browser: Browser) -> None:
    status, _, body = browser.get("/portal")
    assert status == 401
    assert "portal link" in body


def test_tokens_of_a_real_user_pool_sign_in_only_its_operators(
    moto_endpoint: str, user_pool: FakeUserPool, database_url: str, monkeypatch
) -> None:
    # Given a moto user pool with an operator and a reader
    idp = boto3.client("cognito-idp", endpoint_url=moto_endpoint, region_name=REGION)
    pool_id = idp.create_user_pool(PoolName="hookline-operators")["UserPool"]["Id"]
    client_id = idp.create_user_pool_client(
        UserPoolId=pool_id, ClientName="console", ExplicitAuthFlows=["ADMIN_USER_PASSWORD_AUTH"]
    )["UserPoolClient"]["ClientId"]
    idp.create_group(UserPoolId=pool_id, GroupName="operators")
    tokens = {}
    for name, groups in (("ops@example.com", ["operators"]), ("reader@example.com", [])):
        idp.admin_create_user(
            UserPoolId=pool_id, Username=name,
            UserAttributes=[{"Name": "email", "Value": name}], MessageAction="SUPPRESS",
        )  # fmt: skip
        idp.admin_set_user_password(
            UserPoolId=pool_id, Username=name, Password="Correct-horse-9!", Permanent=True
        )
        for group in groups:
            idp.admin_add_user_to_group(UserPoolId=pool_id, Username=name, GroupName=group)
        tokens[name] = idp.admin_initiate_auth(
            UserPoolId=pool_id, ClientId=client_id, AuthFlow="ADMIN_USER_PASSWORD_AUTH",
            AuthParameters={"USERNAME": name, "PASSWORD": "Correct-horse-9!"},
        )["AuthenticationResult"]["IdToken"]  # fmt: skip
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("HOOKLINE_PORTAL_SESSION_KEY", "test-session-key-" + "k" * 24)
    monkeypatch.setenv("HOOKLINE_COGNITO_USER_POOL_ID", pool_id)
    monkeypatch.setenv("HOOKLINE_COGNITO_CLIENT_ID", client_id)
    monkeypatch.setenv("HOOKLINE_COGNITO_DOMAIN", user_pool.url)
    monkeypatch.setenv(
        "HOOKLINE_COGNITO_JWKS_URL", f"{moto_endpoint}/{pool_id}/.well-known/jwks.json"
    )
    get_settings.cache_clear()
    reset_database()
    try:
        # When each signs in with the pool's own ID token
        operator_browser, reader_browser = Browser(), Browser()
        sent = start_sign_in(operator_browser)
        signed_in = callback(operator_browser, user_pool, tokens["ops@example.com"], sent["state"])
        sent = start_sign_in(reader_browser)
        refused = callback(reader_browser, user_pool, tokens["reader@example.com"], sent["state"])
        # Then the operator reaches the console and the reader is refused
        assert signed_in[0] == 200, signed_in[2]
        assert operator_browser.get("/console/tenants")[0] == 200
        assert refused[0] == 403
    finally:
        get_settings.cache_clear()
        reset_database()


def test_behind_a_function_url_the_client_id_comes_from_its_parameter(
    browser: Browser, user_pool: FakeUserPool, moto_endpoint: str, monkeypatch, db
) -> None:
    # Given the console behind its own function URL, told the client's SSM parameter only
    ssm = boto3.client("ssm", endpoint_url=moto_endpoint, region_name=REGION)
    ssm.put_parameter(Name="/Hookline/console/cognito-client-id", Value=CLIENT_ID, Type="String")
    monkeypatch.delenv("HOOKLINE_COGNITO_CLIENT_ID")
    monkeypatch.setenv(
        "HOOKLINE_COGNITO_CLIENT_ID_PARAMETER", "/Hookline/console/cognito-client-id"
    )
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    get_settings.cache_clear()
    cognito._client_ids.clear()
    ops.add_tenant(db, HooklineConfig(), name="url-tenant", group=None)
    url_browser = Browser("function_url")
    # When an operator signs in through it
    sent = start_sign_in(url_browser)
    assert sent["client_id"] == CLIENT_ID
    assert sent["redirect_uri"] == f"https://{URL_HOST}/console/callback"  # no stage
    status, _, body = callback(url_browser, user_pool, user_pool.id_token(), sent["state"])
    assert status == 200, body
    # Then the session cookie came back in the function URL's own field and opens the console
    assert "Path=/console" in url_browser.set_cookies["hl_operator"]
    status, _, body = url_browser.get("/console/tenants")
    assert status == 200
    assert "url-tenant" in body and 'href="/console/events"' in body
