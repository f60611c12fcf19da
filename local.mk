# The local stack (issue 6). Included by the Makefile; uses its BIN, PYTEST and install.
#   make run              the whole system on this machine: hookline dev on 127.0.0.1:8080
#   make demo             Stripe webhooks through it, explained (starts a stack if none runs)
#   make test-localstack  the e2e tier with LocalStack (host mode, no Docker) as the AWS side
#   make bench-e2e        200 events/s for 60 s end to end (BENCH_E2E_ARGS to shorten)

.PHONY: run demo test-localstack bench-e2e

run: install
	$(BIN)/hookline dev

demo: install
	$(BIN)/hookline demo

# Installs localstack-core into .hookline/localstack/venv on first use (~1-2 min; needs a
# Python >= 3.12: found in pyenv or on PATH, or set LOCALSTACK_PYTHON).
test-localstack: install
	$(BIN)/python -m tests.e2e.localstack -- $(PYTEST) -q tests/e2e

BENCH_E2E_ARGS ?=
bench-e2e: install
	$(BIN)/python bench/e2e.py $(BENCH_E2E_ARGS)
