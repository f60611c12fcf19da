"""The dev stack, the `hookline` CLI and their helpers; not in the Lambda layer.

Nothing under `layers/core/hookline` (what the layer bundles) imports this package; the
`core-without-dev-tooling` import contract keeps it that way (decision 0049).
"""
