"""A synthesized stack and the look-ups the infra tests share."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aws_cdk import App
from aws_cdk.assertions import Template

from hookline.config import HooklineConfig, supported_regions
from infra.app import build_app
from infra.stack import HooklineStack

Resources = dict[str, dict[str, Any]]


@dataclass
class StackView:
    """One synthesized stack: the app, the stack, its Template and the raw JSON."""

    app: App
    stack: HooklineStack
    template: Template
    config: HooklineConfig
    raw: dict[str, Any] = field(default_factory=dict)
    _lint: subprocess.Popen[str] | None = None

    def start_lint(self, *, every_region: bool = False) -> None:
        """Start cfn-lint on the template in the background (it takes seconds; tests overlap).
        With `every_region`, one run checks it against every supported region's schemas (a
        resource type or instance class missing in one is an error there)."""
        path = Path(tempfile.mkdtemp(prefix="hookline-cfn-lint-")) / "template.json"
        path.write_text(json.dumps(self.raw))
        script = "import sys; from cfnlint.runner import main; sys.exit(main())"
        regions = ["--regions", *supported_regions(self.config)] if every_region else []
        self._lint = subprocess.Popen(
            [sys.executable, "-c", script, "--format", "json", *regions, "--", str(path)],
            stdout=subprocess.PIPE,
            text=True,
        )

    def lint_matches(self) -> list[dict[str, Any]]:
        """cfn-lint's findings (JSON records: Level, Rule.Id, Message, Location)."""
        if self._lint is None:
            self.start_lint()
        assert self._lint is not None
        out, _ = self._lint.communicate(timeout=300)
        matches: list[dict[str, Any]] = json.loads(out) if out.strip() else []
        # W3691 reads a major-only EngineVersion ("16") as a retired minor: cfn-lint lists
        # full versions only, while RDS takes the major and picks its current minor, which is
        # the point of pinning the major (decision 0062).
        return [m for m in matches if m["Rule"]["Id"] != "W3691"]

    @property
    def resources(self) -> Resources:
        """Every resource by logical id."""
        resources: Resources = self.raw["Resources"]
        return resources

    def of_type(self, resource_type: str) -> Resources:
        """The resources of one CloudFormation type."""
        return {k: v for k, v in self.resources.items() if v["Type"] == resource_type}

    def logical_id(self, path_fragment: str, resource_type: str) -> str:
        """The one resource of `resource_type` whose logical id contains `path_fragment`."""
        found = [k for k in self.of_type(resource_type) if path_fragment in k]
        assert len(found) == 1, f"{path_fragment} {resource_type}: {found}"
        return found[0]

    def functions(self) -> Resources:
        """The Hookline functions (not CDK's own provider functions)."""
        return {
            k: v
            for k, v in self.of_type("AWS::Lambda::Function").items()
            if "POWERTOOLS_SERVICE_NAME" in env_of(v)
        }

    def function(self, fragment: str) -> tuple[str, dict[str, Any]]:
        """The Hookline function whose logical id contains `fragment`."""
        found = [(k, v) for k, v in self.functions().items() if fragment in k]
        assert len(found) == 1, f"{fragment}: {[k for k, _ in found]}"
        return found[0]

    def policy_statements(self, role_logical_id: str) -> list[dict[str, Any]]:
        """Every statement of the inline policies attached to a role."""
        statements: list[dict[str, Any]] = []
        for policy in self.of_type("AWS::IAM::Policy").values():
            roles = policy["Properties"].get("Roles", [])
            if {"Ref": role_logical_id} in roles:
                statements += policy["Properties"]["PolicyDocument"]["Statement"]
        return statements

    def role_of(self, function_logical_id: str) -> str:
        """The logical id of a function's execution role."""
        role = self.resources[function_logical_id]["Properties"]["Role"]
        logical: str = role["Fn::GetAtt"][0]
        return logical


def env_of(function: dict[str, Any]) -> dict[str, Any]:
    """A function resource's environment variables."""
    variables: dict[str, Any] = function["Properties"].get("Environment", {}).get("Variables", {})
    return variables


def actions_of(statement: dict[str, Any]) -> list[str]:
    """A statement's actions as a list."""
    actions = statement["Action"]
    return [actions] if isinstance(actions, str) else list(actions)


def resources_of(statement: dict[str, Any]) -> list[Any]:
    """A statement's resources as a list."""
    resources = statement["Resource"]
    return resources if isinstance(resources, list) else [resources]


def synthesize(context: dict[str, Any], config: HooklineConfig | None = None) -> StackView:
    """Build and synthesize the app without bundling and without the nag plugin's veto.

    cdk-nag is checked by its own test (a report listing each finding reads better than a
    synth that raises), so the app here is built with `nag=False`.
    """
    config = config or HooklineConfig()
    # CDK's built-in template validation is off: cfn-lint checks the template in its own test.
    app, stack = build_app(
        {"aws:cdk:bundling-stacks": [], **context}, config=config, nag=False, cfn_validation=False
    )
    template = Template.from_stack(stack)
    return StackView(app=app, stack=stack, template=template, config=config, raw=template.to_json())
