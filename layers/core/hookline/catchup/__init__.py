"""Provider catch-up: for sources that turn it on, ask the provider's API for what its
webhooks should have brought, so a missed webhook is not a lost event. One module per
provider; adding one is adding a module and a line in `PROVIDERS`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, Protocol

import httpx

from hookline.catchup import github, stripe
from hookline.catchup.base import (
    CatchupContext,
    CatchupError,
    CatchupResult,
    CatchupSettings,
)
from hookline.errors import DatabaseUnavailable, HooklineError, UnsafeURL
from hookline.observability import logger
from hookline.repositories import reconcile as repo
from hookline.repositories.sources import Source, get_source, reveal_catchup_key


class CatchUp(Protocol):
    """One provider's catch-up: work from `position`, fill `result`, return the new
    position (raise CatchupError to keep the old one)."""

    def __call__(
        self,
        ctx: CatchupContext,
        source: Source,
        settings: CatchupSettings,
        position: dict[str, Any],
        result: CatchupResult,
    ) -> dict[str, Any]: ...


PROVIDERS: dict[str, CatchUp] = {
    stripe.PROVIDER: stripe.catch_up,
    github.PROVIDER: github.catch_up,
}


def run_catchup(
    ctx: CatchupContext,
    *,
    lease: timedelta,
    limit: int = 100,
    keep_going: Callable[[], bool] = lambda: True,
) -> list[CatchupResult]:
    """Catch up every source that is due and that no other run holds; one result each.

    A source's failure is its result's `error` (and its position stays where it was); it
    never stops the others. Only a database outage propagates.
    """
    with ctx.db.connection() as conn:
        claimed = repo.claim_catchup_sources(conn, lease=lease, limit=limit)
    results: list[CatchupResult] = []
    for source_id, position in claimed:
        if not keep_going():
            with ctx.db.connection() as conn:  # release it untouched for the next run
                repo.finish_catchup_source(conn, source_id, position=None, error=None)
            continue
        result, new_position = catch_up_source(ctx, source_id, position)
        with ctx.db.connection() as conn:
            repo.finish_catchup_source(conn, source_id, position=new_position, error=result.error)
        results.append(result)
    return results


def catch_up_source(
    ctx: CatchupContext, source_id: str, position: dict[str, Any]
) -> tuple[CatchupResult, dict[str, Any] | None]:
    """Catch up one source: its result, and its new position (None: keep the old one)."""
    result = CatchupResult(source_id, "unknown")
    try:
        with ctx.db.connection() as conn:
            source = get_source(conn, source_id)
            # The inline API key is stored sealed; only the provider call sees it open.
            options = reveal_catchup_key(conn, source.options)
        result.provider = source.scheme
        provider = PROVIDERS.get(source.scheme)
        if provider is None:
            raise CatchupError(f"no catch-up for the {source.scheme} scheme")
        settings = CatchupSettings.from_options(options)
        return result, provider(ctx, source, settings, position, result)
    except DatabaseUnavailable:
        raise
    except CatchupError as err:
        result.error = str(err)
    except UnsafeURL as err:
        # The SSRF guard refused the address at connect time: no request left.
        result.error = f"{result.provider} API refused by the SSRF guard: {err}"
    except httpx.HTTPError as err:
        result.error = f"{result.provider} API unreachable ({type(err).__name__})"
    except (HooklineError, ValueError, KeyError, TypeError) as err:
        # A provider answer we could not use, or a source the verifier refuses.
        result.error = f"{result.provider} catch-up failed ({type(err).__name__})"
    logger.warning("catch-up failed", extra={"source_id": source_id, "error": result.error})
    return result, None


__all__ = [
    "PROVIDERS",
    "CatchupContext",
    "CatchupError",
    "CatchupResult",
    "CatchupSettings",
    "catch_up_source",
    "run_catchup",
]
