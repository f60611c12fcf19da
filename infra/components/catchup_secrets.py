"""The role through which provider catch-up reads a tenant's API key secret.

The reconcile function cannot read catch-up secrets itself. For each source it assumes this
role with the source's tenant as the session tag `tenant_id`, and the role may read only
`hookline/catchup/${aws:PrincipalTag/tenant_id}/*`: a secret under another tenant's prefix is
refused by IAM even if the code's own check (`hookline.catchup.base.check_secret_of_tenant`)
were wrong (docs/decisions/0026-catch-up-options-are-operator-territory.md).
"""

from __future__ import annotations

from aws_cdk import Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra.nag import suppress

CATCHUP_SECRET_PREFIX = "hookline/catchup/"  # noqa: S105 - a name prefix, not a secret
TENANT_TAG = "tenant_id"  # hookline.catchup.secrets.TENANT_TAG
TENANT_SECRETS = f"secret:{CATCHUP_SECRET_PREFIX}${{aws:PrincipalTag/{TENANT_TAG}}}/*"


class CatchupSecretReader(Construct):
    """A role the reconcile function assumes, tagged with one tenant, to read that tenant's
    catch-up key secrets and nothing else."""

    def __init__(
        self, scope: Construct, construct_id: str, *, reconcile: lambda_.Function, role: iam.Role
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        # Only the reconcile role may assume it, only with a tenant_id session tag and no
        # other tag (sts:TagSession is what passes the tag).
        trusted = iam.PrincipalWithConditions(
            iam.SessionTagsPrincipal(iam.ArnPrincipal(role.role_arn)),
            {
                "StringLike": {f"aws:RequestTag/{TENANT_TAG}": "?*"},
                "ForAllValues:StringEquals": {"aws:TagKeys": [TENANT_TAG]},
            },
        )
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=trusted,
            description="Provider catch-up: reads hookline/catchup/<session tenant_id>/* only",
            max_session_duration=Duration.hours(1),
        )
        secrets = f"arn:{stack.partition}:secretsmanager:{stack.region}:{stack.account}:"
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["secretsmanager:GetSecretValue"], resources=[secrets + TENANT_SECRETS]
            )
        )
        reconcile.add_to_role_policy(
            iam.PolicyStatement(
                actions=["sts:AssumeRole", "sts:TagSession"], resources=[self.role.role_arn]
            )
        )
        reconcile.add_environment("HOOKLINE_CATCHUP_SECRET_ROLE_ARN", self.role.role_arn)
        suppress(
            self.role,
            "AwsSolutions-IAM5",
            "GetSecretValue on the session tenant's own catch-up prefix "
            "(hookline/catchup/${aws:PrincipalTag/tenant_id}/*): operators create these secrets "
            "after deploy and their ARNs end in a random suffix.",
            # cdk-nag writes the policy variable ${x} as <x> in its finding ids
            [
                "Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:"
                f"secret:{CATCHUP_SECRET_PREFIX}<aws:PrincipalTag/{TENANT_TAG}>/*"
            ],
        )
