"""Tracing on AWS (decision 0070): with `infrastructure.tracing`, every function gets a
collector extension layer (CDK's ADOT collector layer for the region and architecture, or
`infrastructure.tracing_collector_layer_arn`) and sends its OpenTelemetry spans to it on
localhost by OTLP/HTTP; the collector's default pipeline exports them to X-Ray, which the
functions' active tracing already lets them write to. Off: no layer, no variable, and the
code imports nothing of OpenTelemetry."""

from __future__ import annotations

from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from hookline.config import HooklineConfig

# The collector extension's OTLP/HTTP receiver, on the function's own loopback.
COLLECTOR_OTLP_TRACES = "http://localhost:4318/v1/traces"


def tracing_environment(config: HooklineConfig) -> dict[str, str]:
    """What the code reads to trace (`hookline.settings`): nothing when tracing is off."""
    infra = config.infrastructure
    if not infra.tracing:
        return {}
    return {
        "HOOKLINE_OTLP_TRACES_ENDPOINT": COLLECTOR_OTLP_TRACES,
        "HOOKLINE_TRACE_SAMPLE_RATE": str(infra.xray_sampling_rate),
    }


def collector_layers(scope: Construct, config: HooklineConfig) -> list[lambda_.ILayerVersion]:
    """The collector extension layer of an arm64 function, when tracing is on."""
    infra = config.infrastructure
    if not infra.tracing:
        return []
    arn = infra.tracing_collector_layer_arn
    if arn is None:
        try:
            arn = lambda_.AdotLambdaLayerGenericVersion.LATEST.layer_arn(
                scope, lambda_.Architecture.ARM_64
            )
        except Exception as err:  # jsii raises its own error type; say what to set
            raise ValueError(
                "CDK knows no ADOT collector layer for this region: set "
                "infrastructure.tracing_collector_layer_arn, or turn infrastructure.tracing "
                f"off ({err})"
            ) from err
    return [lambda_.LayerVersion.from_layer_version_arn(scope, "CollectorLayer", arn)]
