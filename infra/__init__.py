"""The Hookline CDK app: one stack composed of small constructs, sized by `HooklineConfig`."""
