"""Migrate: run by a CDK trigger on every deploy, before new code takes traffic."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from hookline.db import connect_refreshing, credentials_for
from hookline.migrate import current_version, migrate
from hookline.observability import logger
from hookline.settings import get_settings


@logger.inject_lambda_context(log_event=False)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Apply pending migrations under the advisory lock; safe to run twice or at once. The
    receipt lease follows the deployment's queued lease (`hookline.migrate.keep_receipt_lease`).

    It connects to the instance directly with the rotated secret's password: a refused
    password (a rotation since the secret was read) re-reads the secret and tries once more.
    """
    settings = get_settings()
    credentials = credentials_for(settings)
    applied = connect_refreshing(credentials, lambda conninfo: migrate(conninfo, settings.config))
    version = connect_refreshing(credentials, current_version)
    logger.info("migrations applied", extra={"applied": applied, "version": version})
    return {"applied": applied, "version": version}
