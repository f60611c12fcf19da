"""How `hookline dev` runs (`DevOptions`), which components a process runs (its roles), and
the error it refuses to start with. See docs/decisions/0018-dev-roles-and-the-chaos-run.md."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hookline.errors import HooklineError

ROLES = ("front", "fanout", "reconcile", "deliver")  # deliver:<group> for one tenant group


def parse_roles(values: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Normalise `--role` values (repeated and/or comma lists): `front`, `fanout`,
    `reconcile`, `deliver` (every tenant group) or `deliver:<group>`. Raises ValueError."""
    roles: list[str] = []
    for value in values:
        for part in value.split(","):
            role = part.strip()
            if not role:
                continue
            base, colon, group = role.partition(":")
            if base not in ROLES or (colon and (base != "deliver" or not group)):
                raise ValueError(
                    f"unknown role {role!r}; roles: front, fanout, reconcile, deliver, "
                    "deliver:<group>"
                )
            if role not in roles:
                roles.append(role)
    return tuple(roles)


class DevStackError(HooklineError):
    """The dev stack cannot start (already running, port taken, database locked, ...)."""


@dataclass(frozen=True)
class DevOptions:
    """How `hookline dev` runs; None means: as the configuration says."""

    port: int = 8080  # 0 picks a free port (written to dev.json)
    state_dir: Path = Path(".hookline")
    fanout_every: float | None = None  # seconds; default schedules.fanout_minutes
    reconcile_every: float | None = None  # seconds; default schedules.reconcile_minutes
    visibility_timeout: int | None = None  # default: deliver function timeout x 6, as on AWS
    log_file: str | None = None  # default <state_dir>/dev.log; "-" is stderr
    status: str = "auto"  # auto (in place on a terminal, else plain lines), plain, off
    status_every: float = 10.0  # seconds between plain status lines
    poll_wait_seconds: int = 1  # long-poll wait of each ReceiveMessage (bounds stop latency)
    roles: tuple[str, ...] = ()  # empty: everything in this process (see parse_roles)

    def runs(self, role: str) -> bool:
        """Whether this process runs `role` (`deliver:<group>` is also run by `deliver`)."""
        if not self.roles:
            return True
        if role in self.roles:
            return True
        return role.startswith("deliver:") and "deliver" in self.roles
