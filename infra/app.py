"""The CDK app (`cdk.json` runs `python -m infra.app` from the repository root).

Context flags:
  -c config=path/to/hookline.json     deployment config (default: ./hookline.json or defaults)
  -c stackName=Hookline               stack name
  -c localstack=true                  the LocalStack variant (see docs/localstack.md)
  -c databaseUrlSecretName=NAME       LocalStack variant: secret holding DATABASE_URL
  -c consoleAdminEmail=ops@example.com the console's first operator (overrides
                                      console.admin_email; Cognito e-mails the invitation)
  -c region=eu-west-1                 the region synth checks support for (default: the CLI's,
                                      CDK_DEFAULT_REGION); the template's rule checks it again
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from hookline.config import (
    NO_ADOT_COLLECTOR,
    NO_FUNCTION_URLS,
    HooklineConfig,
    load_config,
    supported_regions,
)
from infra.paths import REPO_ROOT
from infra.stack import HooklineStack, Variant

DEFAULT_STACK_NAME = "Hookline"


def _flag(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def cdk_json_context() -> dict[str, Any]:
    """The feature flags in cdk.json, so tests synthesize what `cdk synth` synthesizes."""
    context: dict[str, Any] = json.loads((REPO_ROOT / "cdk.json").read_text())["context"]
    return context


def build_app(
    context: dict[str, Any] | None = None,
    config: HooklineConfig | None = None,
    *,
    nag: bool = True,
    cfn_validation: bool = True,
) -> tuple[cdk.App, HooklineStack]:
    """Create the app and its stack; with `nag`, cdk-nag's AWS Solutions checks veto synth."""
    # The CLI passes cdk.json's context itself, with precedence; tests get it from here.
    app = cdk.App(
        context={**cdk_json_context(), **(context or {})},
        builtin_cloud_formation_validation=cfn_validation,
    )
    get = app.node.try_get_context
    config = config or load_config(get("config"))
    if get("consoleAdminEmail"):
        console = dataclasses.replace(config.console, admin_email=str(get("consoleAdminEmail")))
        config = dataclasses.replace(config, console=console)
    region = get("region") or os.environ.get("CDK_DEFAULT_REGION")
    localstack = _flag(get("localstack"))
    if region and not localstack:
        refuse_unsupported_region(str(region), config)
    variant = Variant(
        localstack=localstack,
        database_url_secret_name=get("databaseUrlSecretName") or Variant.database_url_secret_name,
    )
    stack = HooklineStack(
        app,
        get("stackName") or DEFAULT_STACK_NAME,
        config=config,
        variant=variant,
        description="Hookline webhook platform (receiver, fan-out, delivery, reconcile, replay)",
    )
    # DBProxyTargetGroup takes no tags (CloudFormation rejects the property).
    cdk.Tags.of(stack).add(
        "app", "hookline", exclude_resource_types=["AWS::RDS::DBProxyTargetGroup"]
    )
    if nag:
        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app, verbose=True))
    return app, stack


def refuse_unsupported_region(region: str, config: HooklineConfig) -> None:
    """Stop synth for a region that lacks a service the stack uses, before anything is made."""
    regions = supported_regions(config)
    if region not in regions:
        infra = config.infrastructure
        extra = ""
        if infra.ingress == "function_url" and region in NO_FUNCTION_URLS:
            extra += " with infrastructure.ingress function_url"
        if infra.tracing and region in NO_ADOT_COLLECTOR and not infra.tracing_collector_layer_arn:
            extra += (
                " with infrastructure.tracing and no infrastructure.tracing_collector_layer_arn"
                " (CDK knows no ADOT collector layer there)"
            )
        raise ValueError(
            f"Hookline does not deploy to {region}{extra}: a service it uses is missing there "
            f"(docs/operations.md, 'Regions'). Supported: {', '.join(regions)}"
        )


def main() -> None:
    """Synthesize the app (what `cdk synth` / `cdk deploy` run)."""
    app, _ = build_app()
    app.synth()


if __name__ == "__main__":
    main()
