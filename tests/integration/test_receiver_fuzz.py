"""Fuzzing the receiver: random and adversarial requests through the real handler and a
real database. Whatever arrives: never a 5xx while the database is up, never an exception
escaping the handler, and never a stored payload that its source's secret did not sign.

HOOKLINE_FUZZ_EXAMPLES sets the number of cases (CI runs the default, 10,000)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time
from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import event as note_case
from hypothesis import strategies as st
from psycopg import sql

from hookline.config import HooklineConfig
from hookline.db import Database, get_database, reset_database
from hookline_dev.local.apigw import LocalContext, build_rest_event
from tests.fuzz.verifiers import ENTRY_PROVIDERS, same_params
from tests.support import operator
from tests.support.provider_signers import CASES, UNSIGNED_BODY
from tests.support.signers import github_headers, standard_headers, stripe_headers

pytestmark = pytest.mark.integration

EXAMPLES = int(os.environ.get("HOOKLINE_FUZZ_EXAMPLES", "10000"))
STRIPE = "whsec_fuzz_stripe"
GITHUB = "fuzz-github"
STANDARD = "whsec_" + base64.b64encode(b"f" * 32).decode()
SLACK = "fuzz-slack"
ALLOWED = {200, 400, 401, 403, 404, 405, 413, 415}
ENTRY_CASES = {c.scheme: c for c in CASES}  # every registry entry, signed as its provider signs
PROVIDER_OF = {p.scheme: p for p in ENTRY_PROVIDERS}


@pytest.fixture(scope="module")
def fuzz_db(pg_admin_url: str, template_db: str) -> Iterator[str]:
    name = f"hookline_fuzz_{os.getpid()}"
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(template_db)
            )
        )
    yield psycopg.conninfo.make_conninfo(pg_admin_url, dbname=name)
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="module")
def world(fuzz_db: str):
    db = Database(fuzz_db, max_size=2)
    tenant = operator.add_tenant(db, HooklineConfig(), name="fuzz", group="standard")["id"]
    sources = {
        scheme: operator.add_source(db, tenant_id=tenant, scheme=scheme, secrets=[secret])["path"]
        for scheme, secret in (
            ("stripe", STRIPE),
            ("github", GITHUB),
            ("standard", STANDARD),
            ("slack", SLACK),
        )
    }
    for case in CASES:
        sources[case.scheme] = operator.add_source(
            db, tenant_id=tenant, scheme=case.scheme, secrets=[case.secret], options=case.options
        )["path"]
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DATABASE_URL", fuzz_db)
        # A loaded machine must not pass a slow pool checkout off as an outage (a 503).
        env.setenv("HOOKLINE_DB_CONNECT_TIMEOUT", "30")
        reset_database()
        # The handler's pool, connected before Hypothesis draws: psycopg_pool's background
        # worker draws from the `random` module when it connects, and Hypothesis warns when
        # that state changes during a draw ("do not use the random module inside strategies").
        get_database().pool.wait(timeout=30)
        from functions.receiver.handler import lambda_handler

        yield db, sources, lambda_handler
    reset_database()
    db.close()


def slack_headers(secret: str, body: bytes) -> dict[str, str]:
    ts = str(int(time.time()))
    sig = hmac.new(secret.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return {
        "Content-Type": "application/json",
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": f"v0={sig}",
    }


def signed(scheme: str, body: bytes, n: int) -> dict[str, str]:
    if scheme == "stripe":
        return stripe_headers(STRIPE, body)
    if scheme == "github":
        return github_headers(GITHUB, body, delivery=f"d-{n}")
    if scheme == "standard":
        return standard_headers(STANDARD, body, msg_id=f"msg_{n}")
    if scheme in ENTRY_CASES:
        case = ENTRY_CASES[scheme]
        return case.sign(case.secret, body, int(time.time()))
    return slack_headers(SLACK, body)


header_names = st.sampled_from(
    ["Content-Type", "content-type", "Stripe-Signature", "X-Hub-Signature-256", "X-GitHub-Delivery",
     "webhook-id", "webhook-timestamp", "webhook-signature", "X-Slack-Signature",
     "X-Slack-Request-Timestamp", "X-Other", "svix-signature", "X-GitHub-Event",
     "X-Signature-Ed25519", "X-Signature-Timestamp", "X-Twilio-Signature", "Paddle-Signature",
     "X-Hook-Secret", "X-Gitlab-Token", "Authorization", "Mux-Signature"]
) | st.text(min_size=1, max_size=20)  # fmt: skip
header_values = st.text(max_size=200) | st.sampled_from(
    ["application/json", "text/plain", "application/x-www-form-urlencoded", "t=1,v1=00",
     "sha256=zz", "v1,AAAA", "v1,!!!! v1,", "v0=", "99999999999999999999", "-1", "",
     "t=,v1=,v1=", "application/json; charset=utf-8", "\u00e9\u0000", "push\x00", "\ud800"]
)  # fmt: skip
event_types = st.sampled_from(["a.b", "a\u0000b", "\ud800", ""]) | st.text(max_size=20)
json_bodies = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=10), kids, max_size=4)
    ),
    max_leaves=10,
).flatmap(
    lambda v: event_types.map(lambda t: json.dumps({"id": "evt", "type": t, "data": v}).encode())
)
bodies = json_bodies | st.binary(max_size=2048) | st.sampled_from(
    [b"", b"{", b"[]", b"null", b'{"id": 1}', b"\xff\xfe", b"payload=%7B%7D", b"{}" * 3000]
)  # fmt: skip


@st.composite
def requests(draw):
    scheme = draw(st.sampled_from(["stripe", "github", "standard", "slack", *ENTRY_CASES]))
    body = draw(bodies)
    n = draw(st.integers(0, 10**9))
    mode = draw(st.sampled_from(["signed", "tampered", "garbage", "conflicting", "mixed"]))
    headers: list[tuple[str, str]] = []
    signed_body = None
    if mode in ("signed", "tampered", "conflicting", "mixed"):
        good = signed(scheme, body, n)
        headers = list(good.items())
        signed_body = body
        if mode == "tampered":
            body = body + draw(st.binary(min_size=1, max_size=8))
        elif mode == "conflicting":
            # the same signature header again, forged: API Gateway keeps the last value
            auth = ("ignature", "Token", "Authorization", "MAC")
            name = next((k for k in good if any(a in k for a in auth)), list(good)[-1])
            headers.append((name, draw(header_values)))
        elif mode == "mixed":
            headers += draw(st.lists(st.tuples(header_names, header_values), max_size=4))
    else:
        headers = draw(st.lists(st.tuples(header_names, header_values), max_size=8))
    path_choice = draw(st.sampled_from(["source", "source", "random", "other-method"]))
    base64_flag = draw(st.sampled_from([True, True, False, "broken"]))
    return (
        scheme,
        body,
        headers,
        signed_body,
        mode,
        path_choice,
        base64_flag,
        draw(st.text(max_size=30)),
    )


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(requests())
def test_no_request_crashes_the_receiver_or_stores_an_unverified_payload(world, request_case):
    db, sources, handler = world
    scheme, body, headers, signed_body, mode, path_choice, base64_flag, random_path = request_case
    path = sources[scheme] if path_choice in ("source", "other-method") else "/in/" + random_path
    method = "PUT" if path_choice == "other-method" else "POST"
    try:
        body.decode("utf-8")
        can_be_plain = True
    except UnicodeDecodeError:
        can_be_plain = False
    api_event = build_rest_event(
        method, path, headers, body, base64_body=bool(base64_flag) or not can_be_plain
    )
    if base64_flag == "broken" and api_event["body"]:
        api_event["body"] = api_event["body"][:-1] + "*"
    with db.connection() as conn:
        before = conn.execute("SELECT count(*) AS n FROM events").fetchone()["n"]
    # When the request arrives: nothing escapes the handler
    response = handler(api_event, LocalContext())
    # Then never a 5xx, and the status is one the receiver documents
    assert response["statusCode"] in ALLOWED, (response, mode)
    note_case(f"{mode} -> {response['statusCode']}")
    with db.connection() as conn:
        new = (
            conn.execute(
                "SELECT payload FROM events ORDER BY received_at DESC, id DESC LIMIT %s",
                (1,),
            ).fetchall()
            if response["statusCode"] == 200
            else []
        )
        after = conn.execute("SELECT count(*) AS n FROM events").fetchone()["n"]
    # And a stored payload is exactly a body its source's secret signed (a token provider
    # authenticates the sender, not the bytes; Twilio signs the form's parameters)
    if after > before:
        assert response["statusCode"] == 200
        assert signed_body is not None, (scheme, mode, response)
        assert bytes(new[0]["payload"]) == signed_body or body_unsigned(scheme, body, signed_body)
    if response["statusCode"] == 200 and signed_body is None:
        # Only Asana's handshake answers an unsigned request, by its design trust on first use:
        # the first X-Hook-Secret a source receives becomes its secret (decision 0038). It
        # stores nothing, and a second one is refused.
        assert scheme == "asana" and after == before, (scheme, mode, response)
        assert any(name.lower() == "x-hook-secret" for name, _ in headers), (mode, response)
    elif response["statusCode"] == 200:
        assert body == signed_body or body_unsigned(scheme, body, signed_body)


def body_unsigned(scheme: str, body: bytes, signed_body: bytes) -> bool:
    return scheme in UNSIGNED_BODY or (
        scheme == "twilio" and same_params(PROVIDER_OF["twilio"], body, signed_body)
    )
