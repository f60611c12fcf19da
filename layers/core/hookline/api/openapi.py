"""The OpenAPI document of the routes (committed as docs/openapi.json, held to by a test),
with Powertools' validation errors documented as the problem answers they are, and what
client generators need (decision 0064): short operation ids, tags that describe each
resource, the two ways to authenticate, and examples of the bodies a caller writes."""

from __future__ import annotations

import json
import re
from typing import Any

from hookline import __version__
from hookline.api.app import build_app
from hookline.problems import PROBLEM

TITLE = "Hookline management API"
DESCRIPTION = (
    "Manage tenants, sources, endpoints, event types, events, deliveries and replays. "
    "Authenticate with AWS SigV4 (IAM) on a deployment, or with a bearer key (a tenant "
    "principal's key, or `hookline dev`'s HOOKLINE_API_KEY); every object is scoped to the "
    "caller's tenant. Errors are RFC 9457 problem details. The `/v1` paths keep their "
    "meaning across minor versions (docs/compatibility.md)."
)

# An operation's id is its route function's name (camelCase), except where that name alone
# would not say what it acts on. Generators name their functions after these ids.
RENAMED = {
    "preview": "preview_endpoint",
    "create_link": "create_portal_link",
    "status": "get_status",
}

TAGS = [
    {"name": "tenants", "description": "Customers or teams; each belongs to a tenant group."},
    {"name": "sources", "description": "Inbound providers of a tenant and how they verify."},
    {"name": "endpoints", "description": "Where a tenant's events are delivered, and signed."},
    {"name": "event-types", "description": "The catalogue of event types and their schemas."},
    {"name": "events", "description": "The ledger: publish an event, read what was received."},
    {"name": "deliveries", "description": "One event to one endpoint, with its attempts."},
    {"name": "replays", "description": "Deliver again, audited: by ids, window, state or DLQ."},
    {"name": "restores", "description": "Bring archived events back into the ledger."},
    {"name": "status", "description": "What the pipeline is doing now."},
]

SECURITY_SCHEMES = {
    "sigv4": {
        "type": "apiKey",
        "name": "Authorization",
        "in": "header",
        "description": "AWS Signature Version 4 for `execute-api` (an IAM-fronted deployment).",
        "x-amazon-apigateway-authtype": "awsSigv4",
    },
    "bearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "A tenant principal's key, or `hookline dev`'s HOOKLINE_API_KEY.",
    },
}

EXAMPLES: dict[str, dict[str, Any]] = {
    "TenantCreate": {"name": "Acme Corp", "group": "standard"},
    "SourceCreate": {
        "tenant_id": "ten_01JD8X3Q4T9V6R2M5K7N0P1S3A",
        "scheme": "stripe",
        "name": "Stripe live",
        "secret": "whsec_0123456789abcdef",
    },
    "EndpointCreate": {
        "tenant_id": "ten_01JD8X3Q4T9V6R2M5K7N0P1S3A",
        "url": "https://hooks.example.com/hookline",
        "event_types": ["invoice.*"],
    },
    "EventPublish": {
        "tenant_id": "ten_01JD8X3Q4T9V6R2M5K7N0P1S3A",
        "type": "invoice.paid",
        "payload": {"invoice": "in_1001", "amount": 4200, "currency": "eur"},
    },
    "ReplayCreate": {
        "endpoint_id": "ep_01JD8X3Q4T9V6R2M5K7N0P1S3B",
        "since": "2026-11-30T00:00:00Z",
        "states": ["failed", "dead"],
        "reason": "the receiver was down overnight",
    },
    "Problem": {
        "type": "about:blank",
        "title": "Unprocessable Entity",
        "status": 422,
        "detail": "url: required",
        "errors": [{"field": "url", "in": "body", "message": "required"}],
    },
}


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of the management API's routes."""
    doc: dict[str, Any] = json.loads(
        build_app().get_openapi_json_schema(
            title=TITLE, version=__version__, description=DESCRIPTION
        )
    )
    doc["info"]["license"] = {"name": "Apache-2.0", "identifier": "Apache-2.0"}
    doc["tags"] = TAGS
    doc["security"] = [{"sigv4": []}, {"bearer": []}]
    problem_ref = {"$ref": "#/components/schemas/Problem"}
    for path, operations in doc.get("paths", {}).items():
        for method, operation in operations.items():
            operation["operationId"] = operation_id(operation["operationId"], path, method)
            responses = operation.get("responses", {})
            if "422" in responses:
                responses["422"] = {
                    "description": "Validation error",
                    "content": {PROBLEM: {"schema": problem_ref}},
                }
    components = doc.setdefault("components", {})
    components["securitySchemes"] = SECURITY_SCHEMES
    schemas = components.get("schemas", {})
    # Powertools' own validation models: every 422 is a Problem instead (above).
    for unused in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        schemas.pop(unused, None)
    for name, example in EXAMPLES.items():
        if name in schemas:
            schemas[name]["examples"] = [example]
    ids = [op["operationId"] for ops in doc.get("paths", {}).values() for op in ops.values()]
    duplicated = {i for i in ids if ids.count(i) > 1}
    if duplicated:
        raise ValueError(f"operation ids must be unique: {sorted(duplicated)}")
    return doc


def operation_id(generated: str, path: str, method: str) -> str:
    """The route function's name in camelCase (`create_tenant` -> `createTenant`), from the
    id Powertools built as `{function}{path with non-word characters as _}_{method}`."""
    suffix = re.sub(r"\W", "_", path) + f"_{method}"
    name = generated.removesuffix(suffix) if generated.endswith(suffix) else generated
    head, *rest = RENAMED.get(name, name).split("_")
    return head + "".join(word.capitalize() for word in rest)
