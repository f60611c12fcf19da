"""Migrations on deploy: a trigger runs functions/migrate (`hookline migrate`, under an advisory
lock) during the deployment, after the database exists and before the functions and API that
need the new schema are created or updated.

The trigger re-runs whenever the migrate function's version changes, and that version hashes
the layer, which carries hookline/migrations — so a new migration always runs on its deploy.
"""

from __future__ import annotations

from aws_cdk import Duration, triggers
from constructs import Construct, IConstruct

from infra.components.functions import FunctionContext, FunctionSpec, HooklineFunction


class Migrations(Construct):
    """The migrate function and the trigger that invokes it on deploy."""

    def __init__(self, scope: Construct, construct_id: str, *, ctx: FunctionContext) -> None:
        super().__init__(scope, construct_id)
        timeout = ctx.config.infrastructure.migrate_timeout_seconds
        self.migrate = HooklineFunction(
            self,
            "Migrate",
            ctx=ctx,
            spec=FunctionSpec(
                name="migrate",
                description="Applies the hookline schema migrations (run by a deploy trigger)",
                memory_mb=ctx.config.infrastructure.worker_memory_mb,
                timeout_seconds=timeout,
                reserved_concurrency=1,  # migrations never run twice at once
                # Straight to the instance: the proxy's target may still be registering
                # while the first deploy creates it.
                direct_database=True,
            ),
        ).function
        self.trigger = triggers.Trigger(
            self,
            "OnDeploy",
            handler=self.migrate,
            timeout=Duration.seconds(timeout),
            invocation_type=triggers.InvocationType.REQUEST_RESPONSE,
            execute_on_handler_change=True,
        )

    def run_after(self, *scopes: IConstruct) -> None:
        """Run the migrations only once `scopes` (the database) are provisioned."""
        self.trigger.execute_after(*scopes)

    def run_before(self, *scopes: IConstruct) -> None:
        """Create or update `scopes` (functions, API) only after the migrations ran."""
        self.trigger.execute_before(*scopes)
