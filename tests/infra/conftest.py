"""Synthesize each variant of the stack once per session (a synth costs seconds here).

Bundling is skipped (`aws:cdk:bundling-stacks: []`): the layer's pip step needs the network and
is exercised by `make synth`; the template is the same apart from the asset hash.
"""

from __future__ import annotations

import os

import pytest

from tests.infra.view import StackView, synthesize

os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")


@pytest.fixture(scope="session")
def aws() -> StackView:
    """The AWS stack with the default configuration (cfn-lint: every supported region)."""
    view = synthesize({})
    view.start_lint(every_region=True)
    return view


@pytest.fixture(scope="session")
def localstack() -> StackView:
    """The LocalStack variant (no VPC, RDS, proxy or WAF)."""
    view = synthesize({"localstack": "true"})
    view.start_lint()
    return view


@pytest.fixture(params=["aws", "localstack"], scope="session")
def variant(request: pytest.FixtureRequest) -> StackView:
    """Each variant in turn."""
    view: StackView = request.getfixturevalue(request.param)
    return view


@pytest.fixture(scope="session", autouse=True)
def _both_variants_early(aws: StackView, localstack: StackView) -> None:
    """Synthesize both variants at the first infra test, so both cfn-lint runs start early."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the cfn-lint/cdk-nag checks last: by then the background lint runs have finished."""
    checks = [i for i in items if i.path.name == "test_checks.py" and "infra" in i.path.parts]
    if checks:
        rest = [i for i in items if i not in checks]
        items[:] = rest + checks
