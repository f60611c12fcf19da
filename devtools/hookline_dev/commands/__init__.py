"""More `hookline` subcommands, one module per area. Each module defines
`register(sub, common)`, which adds its subparsers to the command tree; `hookline_dev.cli`
calls every module here, so adding a command group is adding one file."""
