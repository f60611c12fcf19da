"""The stack deploys in every supported region and refuses the others (decision 0062): synth
stops, and the template's own rule makes CloudFormation refuse it before creating anything.
cfn-lint checks the default, HTTP API and function URL templates against every supported
region's schemas in one run each (tests/infra/conftest.py, test_ingress.py, test_checks.py)."""

from __future__ import annotations

import json

import pytest

from hookline.config import (
    NO_FUNCTION_URLS,
    SUPPORTED_REGIONS,
    HooklineConfig,
    supported_regions,
)
from infra.app import build_app
from tests.infra.view import StackView

pytestmark = pytest.mark.infra


def test_the_newer_regions_the_rotation_app_broke_are_supported() -> None:
    assert {"eu-south-2", "ap-southeast-4", "il-central-1"} <= set(SUPPORTED_REGIONS)
    # ap-east-2 has no RDS Proxy
    assert "ap-east-2" not in SUPPORTED_REGIONS


@pytest.mark.parametrize(
    ("region", "infrastructure"),
    [("ap-east-2", {}), ("cn-north-1", {}), ("ap-southeast-4", {"ingress": "function_url"})],
)
def test_synth_refuses_a_region_that_lacks_a_service(region: str, infrastructure: dict) -> None:  # type: ignore[type-arg]
    config = HooklineConfig.from_dict({"infrastructure": infrastructure})
    with pytest.raises(ValueError, match=f"does not deploy to {region}"):
        build_app({"region": region, "aws:cdk:bundling-stacks": []}, config=config, nag=False)


def test_the_template_refuses_unsupported_regions_before_creating_anything(
    aws: StackView,
) -> None:
    (assertion,) = aws.raw["Rules"]["SupportedRegion"]["Assertions"]
    regions, region = assertion["Assert"]["Fn::Contains"]
    assert region == {"Ref": "AWS::Region"}
    assert regions == list(SUPPORTED_REGIONS)
    assert "eu-south-2" in json.dumps(assertion["AssertDescription"])


def test_function_urls_are_refused_where_lambda_has_none() -> None:
    config = HooklineConfig.from_dict({"infrastructure": {"ingress": "function_url"}})
    regions = supported_regions(config)
    assert "eu-west-1" in regions
    assert not set(NO_FUNCTION_URLS) & set(regions)
