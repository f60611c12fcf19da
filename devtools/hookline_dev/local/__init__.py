"""Running Hookline on one machine: the pieces that stand in for AWS's invoker."""
