"""Reading a catch-up key from Secrets Manager, as the source's tenant and no one else.

The catch-up checks that the secret is under `hookline/catchup/<tenant_id>/` before it asks
(`base.check_secret_of_tenant`); on AWS the reconcile role cannot read these secrets itself:
it assumes the catch-up secret reader role with the source's tenant as the session tag
`tenant_id`, and that role may read only `hookline/catchup/${aws:PrincipalTag/tenant_id}/*`
(docs/decisions/0026-catch-up-options-are-operator-territory.md). A bug in the check still
meets IAM's wall. Without a role configured (tests, the local stack on moto) the process's own
credentials read the secret.
"""

from __future__ import annotations

import re
from typing import Any

from hookline.aws import client, uncached_client
from hookline.catchup.base import SecretReader
from hookline.settings import Settings

TENANT_TAG = "tenant_id"
SESSION_SECONDS = 900  # the shortest STS allows: one source's read
_SESSION_NAME = re.compile(r"[^\w+=,.@-]")


def secret_reader(settings: Settings) -> SecretReader:
    """A `SecretReader` for the deployment: through the tenant-tagged role when one is set."""
    role_arn = settings.catchup_secret_role_arn
    if role_arn is None:

        def read_directly(tenant_id: str, secret_id: str) -> str:
            answer = client("secretsmanager", settings).get_secret_value(SecretId=secret_id)
            return str(answer["SecretString"])

        return read_directly

    def read_as_tenant(tenant_id: str, secret_id: str) -> str:
        answer = tenant_client(settings, role_arn, tenant_id).get_secret_value(SecretId=secret_id)
        return str(answer["SecretString"])

    return read_as_tenant


def tenant_client(settings: Settings, role_arn: str, tenant_id: str) -> Any:
    """A Secrets Manager client on a session of `role_arn` tagged with `tenant_id`."""
    session = _SESSION_NAME.sub("_", f"catchup-{tenant_id}")[:64]
    credentials = client("sts", settings).assume_role(
        RoleArn=role_arn,
        RoleSessionName=session,
        DurationSeconds=SESSION_SECONDS,
        Tags=[{"Key": TENANT_TAG, "Value": tenant_id}],
    )["Credentials"]
    return uncached_client(
        "secretsmanager",
        settings,
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
    )
