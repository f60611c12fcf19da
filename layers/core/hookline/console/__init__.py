"""The operator console (`/console`) and the tenant portal (`/portal`): server-rendered
pages over the management services (docs/decisions/0042, 0043)."""
