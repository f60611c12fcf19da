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
    """The AWS stack with the default configuration."""
    view = synthesize({})
    view.start_lint()
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
