"""What an event would become at one endpoint: its content filter and input transformer
tried on an event given by the caller (`POST /v1/endpoints/{id}/preview`). The event is held
to what a publish may be (size, depth, integer digits: decision 0027), and its evaluation to
the budgets of the pipeline (decision 0060), so a preview costs what a delivery may."""

from __future__ import annotations

import json
from typing import Any

from hookline.catalogue_limits import (
    DEFAULT_LIMITS,
    CatalogueLimits,
    check_json_shape,
    check_payload_size,
)
from hookline.db import Database
from hookline.management.access import Caller
from hookline.patterns import event_document, matches, parse_pattern
from hookline.repositories import endpoints as endpoint_repo
from hookline.transformers import TransformFailed, parse_transformer, render


def preview_endpoint(
    db: Database,
    caller: Caller,
    endpoint_id: str,
    body: dict[str, Any],
    limits: CatalogueLimits = DEFAULT_LIMITS,
) -> dict[str, Any]:
    """Whether the event in `body` ({type, payload, source_id}) matches the endpoint's content
    filter, and the body its input transformer makes of it (or why it cannot render). A
    `content_filter` or `input_transformer` in `body` is tried instead of the saved one,
    validated as a save would; nothing is written. A payload over the publish limits is
    refused (413 over `payload_max_bytes`, 400 deeper than `payload_max_depth`), and so is
    a filter that goes over its budget on it (400)."""
    payload = body.get("payload")
    check_payload_size(len(_json_text(payload).encode()), limits)
    check_json_shape(
        payload,
        root="payload",
        max_depth=limits.payload_max_depth,
        max_integer_digits=limits.max_integer_digits,
        depth_limit="payload_max_depth",
    )
    with db.connection() as conn:
        endpoint = endpoint_repo.get_in_scope(conn, caller.tenant, endpoint_id)
    pattern = endpoint["content_filter"]
    if body.get("content_filter") is not None:
        pattern = parse_pattern(body["content_filter"])
    transformer = endpoint["input_transformer"]
    if body.get("input_transformer") is not None:
        transformer = parse_transformer(body["input_transformer"])
    document = event_document(
        body["type"], endpoint["tenant_id"], body.get("source_id"), body.get("payload")
    )
    result: dict[str, Any] = {
        "matches": matches(pattern, document),
        "body": None,
        "content_type": None,
        "error": None,
    }
    if transformer is None:
        result["body"] = _json_text(body.get("payload"))
        result["content_type"] = "application/json"
        return result
    try:
        rendered = render(transformer, document)
    except TransformFailed as err:
        result["error"] = f"transform: {err}"
        return result
    result["body"] = rendered.body.decode("utf-8")
    result["content_type"] = rendered.content_type
    return result


def _json_text(payload: Any) -> str:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
