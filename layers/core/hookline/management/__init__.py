"""The management API's core: who is calling (access), what they may send and get back
(models), and the tenant-scoped services behind each route (`*_service`, one per resource)."""
