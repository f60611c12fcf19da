"""The management API's HTTP edge (`/v1/*`): routers, one module per resource (`routes/`),
and what every route shares — who the caller is, idempotent creates, the input guards, the
error mapping and the OpenAPI document. The management API function (`functions/api`) and
the in-process CLI (`hookline_dev.apiclient`) both build their resolver here with `build_app`."""

from __future__ import annotations

from hookline.api.app import build_app, serve

__all__ = ["build_app", "serve"]
