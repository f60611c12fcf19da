"""The tracing switch (decision 0070): off by default, nothing of it in the template; on,
every function gets the collector extension layer and the OTLP endpoint and sample rate the
code reads, and keeps Lambda's active tracing."""

from __future__ import annotations

import json

import pytest
from aws_cdk import App, Environment, Stack
from aws_cdk import aws_lambda as lambda_

from hookline.config import (
    NO_ADOT_COLLECTOR,
    SUPPORTED_REGIONS,
    HooklineConfig,
    supported_regions,
)
from infra.app import refuse_unsupported_region
from tests.infra.view import StackView, env_of, synthesize

pytestmark = pytest.mark.infra

LAYER = "arn:aws:lambda:eu-south-2:123456789012:layer:otel-collector-arm64:3"


@pytest.fixture(scope="module")
def traced() -> StackView:
    config = HooklineConfig.from_dict(
        {"infrastructure": {"tracing": True, "xray_sampling_rate": 0.05}}
    )
    return synthesize({}, config=config)


def test_tracing_is_off_by_default(aws: StackView) -> None:
    for name, fn in aws.functions().items():
        env = env_of(fn)
        assert "HOOKLINE_OTLP_TRACES_ENDPOINT" not in env, name
        assert len(fn["Properties"]["Layers"]) == 1, name
    assert "aws-otel-collector" not in json.dumps(aws.raw)


def test_with_tracing_every_function_exports_to_its_collector_extension(
    traced: StackView,
) -> None:
    fns = traced.functions()
    assert fns
    for name, fn in fns.items():
        props = fn["Properties"]
        env = env_of(fn)
        assert env["HOOKLINE_OTLP_TRACES_ENDPOINT"] == "http://localhost:4318/v1/traces", name
        assert env["HOOKLINE_TRACE_SAMPLE_RATE"] == "0.05", name
        layers = json.dumps(props["Layers"])
        assert len(props["Layers"]) == 2 and "aws-otel-collector-arm64" in layers, name
        assert props["TracingConfig"] == {"Mode": "Active"}, name
        assert "POWERTOOLS_TRACER_CAPTURE_RESPONSE" not in env, name


def test_a_collector_layer_can_be_named_where_cdk_knows_none() -> None:
    config = HooklineConfig.from_dict(
        {"infrastructure": {"tracing": True, "tracing_collector_layer_arn": LAYER}}
    )
    view = synthesize({}, config=config)
    for name, fn in view.functions().items():
        assert LAYER in fn["Properties"]["Layers"], name
    with pytest.raises(ValueError, match="tracing_collector_layer_arn"):
        HooklineConfig.from_dict({"infrastructure": {"tracing_collector_layer_arn": "otel"}})


def test_tracing_deploys_only_where_cdk_knows_the_collector_layer() -> None:
    # Given CDK's own region facts for the ADOT collector layer
    app = App()
    lacking = []
    for region in SUPPORTED_REGIONS:
        stack = Stack(app, f"R{region.replace('-', '')}", env=Environment(region=region))
        try:
            lambda_.AdotLambdaLayerGenericVersion.LATEST.layer_arn(
                stack, lambda_.Architecture.ARM_64
            )
        except Exception:
            lacking.append(region)
    # Then the regions tracing refuses are exactly those, unless a layer is named
    assert tuple(lacking) == NO_ADOT_COLLECTOR
    traced = HooklineConfig.from_dict({"infrastructure": {"tracing": True}})
    assert set(supported_regions(traced)) == set(SUPPORTED_REGIONS) - set(lacking)
    with pytest.raises(ValueError, match="tracing_collector_layer_arn"):
        refuse_unsupported_region("eu-south-2", traced)
    named = HooklineConfig.from_dict(
        {"infrastructure": {"tracing": True, "tracing_collector_layer_arn": LAYER}}
    )
    refuse_unsupported_region("eu-south-2", named)
