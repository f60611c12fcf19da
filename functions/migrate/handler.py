"""Migrate: run by a CDK trigger on every deploy, before new code takes traffic."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from hookline.db import resolve_conninfo
from hookline.migrate import current_version, migrate
from hookline.observability import logger
from hookline.settings import get_settings


@logger.inject_lambda_context(log_event=False)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Apply pending migrations under the advisory lock; safe to run twice or at once."""
    conninfo = resolve_conninfo(get_settings())
    applied = migrate(conninfo)
    version = current_version(conninfo)
    logger.info("migrations applied", extra={"applied": applied, "version": version})
    return {"applied": applied, "version": version}
