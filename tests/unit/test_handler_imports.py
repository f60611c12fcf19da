"""The hot handlers' cold start: what a fresh interpreter loads when Lambda imports them.

Counts modules, never times them (bench/coldstart.py times). Each handler is imported in a
fresh interpreter, as Lambda's init does, with the packages the layer does not ship (the CLI's
click, rich and pygments, which httpx imports for its own command line when they are there)
made unimportable, as they are on Lambda.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
NOT_IN_LAYER = ("click", "rich", "pygments")

# What each path never uses at import (a lazily created client is built on first use).
NEVER = {
    # The AWS SDK proper (a client is built at the first nudge), OpenTelemetry (loaded at the
    # first span, where tracing is on: decision 0070), schema checks
    # (inbound events are never checked), HTTP clients, the management service.
    "receiver": (
        "boto3", "botocore.session", "s3transfer", "opentelemetry", "jsonschema", "pydantic",
        "httpx", "hookline.management", "hookline.event_catalogue", "hookline.replay",
        "hookline.catchup", "hookline.reconcile", "hookline.delivery",
        # Fan-out's queues and ledger walk, the archive: the runtime builds them on use.
        "hookline.fanout", "hookline.queues", "hookline.archive",
        "hookline.repositories.deliveries",
        # Public-key schemes (Discord's Ed25519, SendGrid's ECDSA) load it when they verify.
        "cryptography.hazmat.primitives.asymmetric",
        "ulid",
        # One route, read straight from the event: no resolver (decision 0074).
        "aws_lambda_powertools.event_handler",
    ),
    "fanout": (
        "boto3", "botocore.session", "s3transfer", "opentelemetry", "jsonschema", "pydantic",
        "httpx", "hookline.management", "hookline.event_catalogue", "hookline.replay",
        "hookline.catchup", "hookline.reconcile", "hookline.delivery", "hookline.ingest",
    ),
    "deliver": (
        "boto3", "botocore.session", "s3transfer", "opentelemetry", "jsonschema", "pydantic",
        "hookline.management", "hookline.event_catalogue", "hookline.replay",
        "hookline.catchup", "hookline.reconcile", "re2",
        # Client certificates are parsed when an endpoint is saved, never when sending.
        "cryptography.x509",
        # Ed25519 (`v1a`) signing keys load it when one signs; HMAC is the common case.
        "cryptography.hazmat.primitives.asymmetric",
        # The partial batch response is built by the handler (decision 0073): Powertools'
        # batch utility imports every event source's data classes.
        "aws_lambda_powertools.utilities.batch", "aws_lambda_powertools.utilities.data_classes",
        # Spans are recorded only where tracing is on (decision 0070).
        "hookline.event_traces",
        # AWS targets' validators, OAuth2 tokens and mutual TLS: for the endpoints using them.
        "hookline.destinations", "hookline.endpoint_auth.oauth2", "hookline.endpoint_auth.tls",
        # Ids are encoded by hookline.ids, without python-ulid (decision 0073).
        "ulid",
        # Input transformers, content filters, ordering keys and the quarantine: for the
        # endpoints that use them, and for fan-out, reconcile and replay (decision 0078).
        "hookline.transformers", "hookline.patterns", "hookline.pattern_matching",
        "hookline.ordering", "hookline.repositories.quarantine",
    ),
    # The management API and the console build their resolvers at init (Lambda's init phase,
    # which provisioned concurrency runs ahead of requests), but schema checks load only when a
    # schema is checked, and the AWS SDK only when a client is first built.
    "api": ("hookline.event_catalogue", "jsonschema", "boto3", "botocore.session"),
    "console": (
        "hookline.event_catalogue", "jsonschema", "boto3", "botocore.session",
        # PyJWT and cryptography's RSA and x509 verify a Cognito ID token at a sign-in's
        # callback only; every other request carries a session (decision 0073).
        "jwt", "cryptography.x509", "cryptography.hazmat.primitives.asymmetric",
    ),
}  # fmt: skip


# Built on the first request: what the resolver itself never needs until a route uses it.
FIRST_REQUEST = {
    "api": "functions.api.handler.current_app('rest')",
    "console": "functions.console.handler.current_app()",
}
# JSON Schema checks run only when an event type's schema is saved or a payload is checked.
NEVER_ON_FIRST_REQUEST = ("jsonschema", "referencing", "hookline.event_catalogue")


def loaded_modules(handler: str, then: str = "") -> list[str]:
    """The modules a fresh interpreter holds after importing `functions.<handler>.handler`
    (and running `then`)."""
    code = (
        "import json, sys\n"
        f"sys.modules.update(dict.fromkeys({NOT_IN_LAYER!r}))\n"
        f"import functions.{handler}.handler\n"
        f"{then}\n"
        "print(json.dumps(sorted(m for m, v in sys.modules.items() if v is not None)))\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'layers' / 'core'}{os.pathsep}{ROOT}"}
    env.pop("HOOKLINE_OTLP_TRACES_ENDPOINT", None)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    modules: list[str] = json.loads(out.stdout)
    return modules


@pytest.mark.parametrize("handler", sorted(NEVER))
def test_hot_handler_imports_nothing_its_path_does_not_use(handler: str) -> None:
    # When Lambda's init imports the handler
    modules = loaded_modules(handler)
    # Then nothing it never runs is loaded
    unwanted = [
        m for m in modules for never in NEVER[handler] if m == never or m.startswith(never + ".")
    ]
    assert unwanted == []


@pytest.mark.parametrize("handler", sorted(FIRST_REQUEST))
def test_first_request_builds_the_resolver_without_json_schema(handler: str) -> None:
    # When the first request builds the resolver with every route or page
    modules = loaded_modules(handler, then=FIRST_REQUEST[handler])
    # Then the resolver is there, and the JSON Schema machinery still is not
    assert f"hookline.{handler}.app" in modules
    unwanted = [
        m
        for m in modules
        for never in NEVER_ON_FIRST_REQUEST
        if m == never or m.startswith(never + ".")
    ]
    assert unwanted == []
