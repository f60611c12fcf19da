"""The OpenAPI document of the routes (committed as docs/openapi.json, held to by a test),
with Powertools' validation errors documented as the problem answers they are."""

from __future__ import annotations

import json
from typing import Any

from hookline.api.app import build_app
from hookline.problems import PROBLEM

TITLE = "Hookline management API"
VERSION = "1.0.0"
DESCRIPTION = (
    "Manage tenants, sources, endpoints, event types, events, deliveries and replays. "
    "Authenticate with AWS SigV4 (IAM); every object is scoped to the caller's tenant."
)


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of the management API's routes."""
    doc: dict[str, Any] = json.loads(
        build_app().get_openapi_json_schema(title=TITLE, version=VERSION, description=DESCRIPTION)
    )
    problem_ref = {"$ref": "#/components/schemas/Problem"}
    for operations in doc.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.get("responses", {})
            if "422" in responses:
                responses["422"] = {
                    "description": "Validation error",
                    "content": {PROBLEM: {"schema": problem_ref}},
                }
    schemas = doc.get("components", {}).get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return doc
