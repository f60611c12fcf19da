"""Bodies deeper than the publish depth limit are refused at receive, for every scheme
(decision 0059): the probe's `[[[…]]]` through an `hmac` source that accepts any body, and a
Stripe event nested past the limit, are a 400 naming `payload_max_depth` and store nothing;
a body at the limit, and a form or text body, are stored as before."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from hookline.db import Database
from tests.integration.conftest import STRIPE_SECRET
from tests.support import operator
from tests.support.lambdas import ApiClient
from tests.support.signers import stripe_headers

pytestmark = pytest.mark.integration

SECRET = "hmac-depth-secret"


def events(db: Database) -> int:
    with db.connection() as conn:
        row = conn.execute("SELECT count(*) AS n FROM events").fetchone()
    assert row is not None
    return int(row["n"])


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.fixture
def any_body_source(db: Database, tenant: dict[str, str]) -> str:
    source = operator.add_source(
        db, tenant_id=tenant["id"], scheme="hmac", secrets=[SECRET],
        options={"header": "X-Sig", "require_json": False},
    )  # fmt: skip
    return f"/in/{source['id']}"


def post_hmac(api: ApiClient, path: str, body: bytes, content_type: str) -> tuple[int, str]:
    sig = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    result = api.post(path, headers={"X-Sig": sig, "Content-Type": content_type}, body=body)
    return result.status, result.body.decode()


def test_the_probes_deep_body_is_refused_by_a_source_that_takes_any_body(
    api: ApiClient, db: Database, any_body_source: str
) -> None:
    # When the prober posts its signed 3,000-deep body as text
    status, answer = post_hmac(api, any_body_source, nested(3000), "text/plain")
    # Then it is a clear 400 naming the limit, and nothing is stored
    assert status == 400
    assert "nests deeper than 64 levels" in answer and "payload_max_depth" in answer
    assert events(db) == 0
    # And a body at the limit, a form and a text body (brackets and all) are stored
    assert post_hmac(api, any_body_source, nested(64), "application/json")[0] == 200
    assert (
        post_hmac(api, any_body_source, b"a[b][c]=1&d=%5B%5B", "application/x-www-form-urlencoded")[
            0
        ]
        == 200
    )
    assert post_hmac(api, any_body_source, b"log: " + b"[" * 200, "text/plain")[0] == 200
    # And brackets inside JSON strings do not count
    deep_text = json.dumps({"note": "[" * 500}).encode()
    assert post_hmac(api, any_body_source, deep_text, "application/json")[0] == 200
    assert events(db) == 4


def test_a_provider_event_nested_past_the_limit_is_refused(
    api: ApiClient, db: Database, stripe_source: dict[str, str]
) -> None:
    # Given a Stripe-signed event 100 levels deep (Python's parser takes it: it is under ~950)
    body = json.dumps({"id": "evt_deep", "type": "x.y", "data": json.loads(nested(100))}).encode()
    # When Stripe posts it
    result = api.post(stripe_source["path"], headers=stripe_headers(STRIPE_SECRET, body), body=body)
    # Then it is refused with the limit named, and nothing is stored
    assert result.status == 400 and b"payload_max_depth" in result.body
    assert events(db) == 0
