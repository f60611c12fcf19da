"""Powertools, made safe for many concurrent invocations in one process (local runner only).

A Lambda container runs one invocation at a time, and Powertools relies on it in two places
that matter when the dev stack invokes handlers from many threads of one process:

* `APIGatewayRestResolver` stores the event being resolved, and the Lambda context, on the
  `BaseRouter` *class* (`BaseRouter.current_event = ...`): two resolutions at once read each
  other's path, headers and body, even with one resolver instance per thread.
  `isolate_resolver_state` gives every thread its own: `current_event` and `lambda_context`
  become per-thread on `ApiGatewayResolver` (which every REST/HTTP/ALB resolver inherits), set
  where Powertools converts the event and where `resolve` receives the context.
* `Metrics` keeps one metric set per process and flushes it after each invocation: a flush in
  one thread can empty the set between another's emptiness check and its serialisation, which
  raises and fails that invocation. `serialize_metrics` puts the set's changes and flushes
  under one lock (EMF lines may then mix the counts of concurrent invocations; totals hold).

Both patch the pinned Powertools version (pyproject.toml) and check what they patch: if its
internals change, `isolate_resolver_state` reports False and the front falls back to invoking
one handler at a time. `tests/integration/test_local_front.py` proves the isolation.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_PATCHED = "_hookline_per_thread"


class _PerThread:
    """A data descriptor whose value is per thread (falling back to the class-wide one)."""

    def __init__(self, local: threading.local, name: str, fallback: Callable[[], Any]) -> None:
        self.local = local
        self.name = name
        self.fallback = fallback

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        try:
            return getattr(self.local, self.name)
        except AttributeError:
            return self.fallback()

    def __set__(self, obj: object, value: Any) -> None:
        setattr(self.local, self.name, value)


def isolate_resolver_state() -> bool:
    """Make each thread's resolutions see only their own event and context; whether the
    patch applies to this Powertools version (idempotent)."""
    from aws_lambda_powertools.event_handler import api_gateway

    resolver: Any = getattr(api_gateway, "ApiGatewayResolver", None)
    base: Any = getattr(api_gateway, "BaseRouter", None)
    if resolver is None or base is None:
        return False
    if getattr(resolver, _PATCHED, False):
        return True
    needed = ("_to_proxy_event", "resolve")
    if not all(callable(getattr(resolver, name, None)) for name in needed):
        return False
    if "current_event" in vars(resolver) or "lambda_context" in vars(resolver):
        return False  # Powertools changed how it keeps them: do not guess
    local = threading.local()
    to_proxy_event = resolver._to_proxy_event
    resolve = resolver.resolve

    def per_thread_to_proxy_event(self: Any, event: dict[str, Any]) -> Any:
        proxy = to_proxy_event(self, event)
        local.current_event = proxy
        return proxy

    def per_thread_resolve(self: Any, event: Any, context: Any) -> Any:
        local.lambda_context = context
        return resolve(self, event, context)

    resolver._to_proxy_event = per_thread_to_proxy_event
    resolver.resolve = per_thread_resolve
    resolver.current_event = _PerThread(
        local, "current_event", lambda: vars(base).get("current_event")
    )
    resolver.lambda_context = _PerThread(
        local, "lambda_context", lambda: vars(base).get("lambda_context")
    )
    setattr(resolver, _PATCHED, True)
    return True


def serialize_metrics() -> None:
    """Put every change to the process-wide metric set, and every flush, under one lock."""
    from hookline.observability import metrics

    provider: Any = metrics.provider
    if getattr(provider, _PATCHED, False):
        return
    lock = threading.RLock()  # flush_metrics calls serialize_metric_set and clear_metrics
    for name in (
        "add_metric", "add_dimension", "add_metadata", "serialize_metric_set",
        "flush_metrics", "clear_metrics",
    ):  # fmt: skip
        setattr(provider, name, _under(lock, getattr(provider, name)))
    setattr(provider, _PATCHED, True)


def _under(lock: threading.RLock, method: Callable[..., Any]) -> Callable[..., Any]:
    def locked(*args: Any, **kwargs: Any) -> Any:
        with lock:
            return method(*args, **kwargs)

    return locked
