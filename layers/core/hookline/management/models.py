"""What the management API's models share: a request body refuses unknown fields, an error is a
problem document, a list is a page. The models themselves, which are also the OpenAPI
document's schemas, are one module per resource (`*_models`). Secrets appear only in the
`*Created` and `*Rotated` answers."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

STATES = Literal["pending", "queued", "delivering", "delivered", "failed", "dead", "held"]
REPLAYED_NOTE = (
    "Set (and `secret` null) when this is a kept answer replayed for its Idempotency-Key: "
    "the secret was shown once, in the first answer (docs/decisions/0028)."
)


class Input(BaseModel):
    """A request body: unknown fields are refused, so a typo is an error, not a no-op."""

    model_config = ConfigDict(extra="forbid")


class Problem(BaseModel):
    """An error (RFC 9457 `application/problem+json`)."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    errors: list[dict[str, Any]] | None = None


class Page(BaseModel):
    """A page of a list; pass `next_cursor` as `cursor` for the next one (null: the end)."""

    next_cursor: str | None = None
