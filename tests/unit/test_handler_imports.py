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

# The management API's route modules and the console's page modules (hookline.api.routes,
# hookline.console.app), listed here so that a new one is guarded by the test that lists it.
API_ROUTES = (
    "tenants", "sources", "endpoints", "health", "events", "deliveries", "quarantine",
    "event_types", "replays", "restores", "status",
)  # fmt: skip
CONSOLE_PAGES = (
    "operator", "operator_dlq", "operator_sources", "operator_endpoint_edit",
    "operator_quarantine", "portal",
)  # fmt: skip

# Every scheme's module (hookline.verifiers): listed here so that a new one is guarded.
VERIFIER_MODULES = (
    "schemes", "providers", "entry", "special", "sns", "handshakes", "catalogue", "generic",
    "github", "razorpay", "shopify", "slack", "standard", "stripe",
)  # fmt: skip

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
        # A source's scheme is imported when the source is first verified (decision 0083);
        # the handshakes (and SNS's certificate checks) only for the schemes having one.
        *(f"hookline.verifiers.{name}" for name in VERIFIER_MODULES),
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
        # Webhooks go out on httpcore alone; httpx's client is built for OAuth2 tokens only
        # (decision 0112).
        "httpx", "hookline.guarded_http",
    ),
    # The management API and the console build a resolver per resource (or set of pages) at
    # its first request, with only the routes that request may take (decision 0079): init
    # imports what every request uses. Schema checks load only when a schema is checked, and
    # the AWS SDK only when a client is first built.
    "api": (
        "hookline.event_catalogue", "jsonschema", "boto3", "botocore.session",
        *(f"hookline.api.routes.{name}" for name in API_ROUTES),
        # What the resources' routes use: their services, models and clients.
        "hookline.management.endpoint_service", "hookline.management.event_service",
        "hookline.management.endpoint_models", "hookline.replay", "hookline.ingest",
        "hookline.verifiers", "httpx",
        # Kept answers of idempotent creates are sealed: loaded by the first keyed create.
        "cryptography",
    ),
    "console": (
        "hookline.event_catalogue", "jsonschema", "boto3", "botocore.session",
        # PyJWT and cryptography's RSA and x509 verify a Cognito ID token at a sign-in's
        # callback only; every other request carries a session (decision 0073); httpx fetches
        # that token (decision 0079).
        "jwt", "cryptography.x509", "cryptography.hazmat.primitives.asymmetric", "httpx",
        # The pages, and the services and models behind them, load with the first request
        # that may take them (decision 0079).
        *(f"hookline.console.{name}" for name in CONSOLE_PAGES),
        "hookline.console.endpoint_edit", "hookline.console.actions",
        "hookline.management.endpoint_service", "hookline.replay", "pydantic",
    ),
}  # fmt: skip


# The resolver with every route or page, as a request naming no known resource builds it.
FIRST_REQUEST = {
    "api": "functions.api.handler.current_app(('rest', None))",
    "console": "functions.console.handler.current_app(functions.console.handler.pages_for('/'))",
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


# A first request to one resource: what it loads, and what it leaves to the others.
ONE_RESOURCE = {
    "api": (
        "functions.api.handler.current_app(('rest', 'status'))",
        "hookline.api.routes.status",
        [f"hookline.api.routes.{name}" for name in API_ROUTES if name != "status"],
    ),
    "console": (
        "functions.console.handler.current_app(functions.console.handler.pages_for('/portal'))",
        "hookline.console.portal",
        [f"hookline.console.{name}" for name in CONSOLE_PAGES if name != "portal"],
    ),
}


@pytest.mark.parametrize("handler", sorted(ONE_RESOURCE))
def test_first_request_imports_only_its_resources_routes(handler: str) -> None:
    then, wanted, others = ONE_RESOURCE[handler]
    # When a cold container's first request names one resource
    modules = loaded_modules(handler, then=then)
    # Then its routes are loaded, and no other resource's
    assert wanted in modules
    assert [m for m in others if m in modules] == []


@pytest.mark.parametrize("handler", sorted(FIRST_REQUEST))
def test_provisioned_concurrency_imports_every_route_at_init(
    handler: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an environment Lambda initialises ahead of requests
    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", "provisioned-concurrency")
    # When its init imports the handler
    modules = loaded_modules(handler)
    # Then every route or page is already loaded, and no first request waits for one
    names = API_ROUTES if handler == "api" else CONSOLE_PAGES
    package = "hookline.api.routes" if handler == "api" else "hookline.console"
    assert [n for n in names if f"{package}.{n}" not in modules] == []


# A source's first request: its scheme's module, and no other scheme's (decision 0083).
FIRST_VERIFIED = {
    "stripe": ("stripe",),
    "zoom": ("providers", "entry"),  # an entry: the table, and the class checking it
    "twilio": ("providers", "entry", "special"),  # an entry checked by its own class
}


@pytest.mark.parametrize("scheme", sorted(FIRST_VERIFIED))
def test_a_sources_first_request_imports_only_its_schemes_verifier(scheme: str) -> None:
    # When a cold receiver's first request builds the verifier of one source's scheme
    then = (
        "from hookline.verifiers import SourceConfig, verifier_for\n"
        f"verifier_for({scheme!r}, SourceConfig(['secret']))"
    )
    modules = loaded_modules("receiver", then=then)
    # Then its scheme's modules are loaded, and no other scheme's
    loaded = {m.removeprefix("hookline.verifiers.") for m in modules}
    assert set(FIRST_VERIFIED[scheme]) <= loaded
    assert loaded & set(VERIFIER_MODULES) == set(FIRST_VERIFIED[scheme])


def test_provisioned_concurrency_imports_every_scheme_at_init(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a receiver Lambda initialises ahead of requests
    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", "provisioned-concurrency")
    # When its init imports the handler
    modules = loaded_modules("receiver")
    # Then every scheme is already loaded
    assert "hookline.verifiers.schemes" in modules


def test_a_receivers_first_request_wires_no_http_client() -> None:
    # When a cold receiver's first request looks up its wiring
    modules = loaded_modules("receiver", then="functions.receiver.handler.wiring()")
    # Then httpx is still not loaded: only an SNS source builds the client (decision 0083)
    assert [m for m in modules if m == "httpx" or m.startswith("httpx.")] == []


def test_delivers_first_batch_makes_no_aws_client(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a deliver Lambda's environment (nothing listens on the database's port)
    monkeypatch.setenv("DATABASE_URL", "postgresql://127.0.0.1:9/none")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    # When its first batch builds the deliverer
    modules = loaded_modules("deliver", then="functions.deliver.handler.current_deliverer()")
    # Then the webhook client is there, without httpx (decision 0112), and botocore is not:
    # SQS is called only to retry, defer or hand on an ordered delivery, and its client is
    # made then (decision 0083)
    assert "hookline.webhook_client" in modules and "httpcore" in modules
    assert [m for m in modules if m == "httpx" or m.startswith("httpx.")] == []
    # (Powertools imports the botocore package itself, for its user agent.)
    assert [m for m in ("botocore.session", "botocore.client") if m in modules] == []
