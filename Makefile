# Hookline — one machine, no Docker, no accounts.
#   make run    install everything, then run the whole system locally (hookline dev)
#   make test   install everything and run every test tier
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PYTEST := $(BIN)/pytest -p no:cacheprovider

.PHONY: install test test-unit test-integration test-infra test-e2e test-browser lint typecheck bench bench-load bench-chaos bench-coldstart bench-pipeline clean clients dist licences

install: $(VENV)/.installed

# The generated clients too: the Python one installed, the TypeScript one's generator and
# compiler from its lock file (tests/e2e/test_clients.py, tests/integration/test_clients_*).
$(VENV)/.installed: pyproject.toml clients/python/pyproject.toml clients/typescript/package-lock.json
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,infra,cli]' -e ./clients/python
	cd clients/typescript && npm ci --no-audit --no-fund
	touch $@

# The whole suite: on two pytest-xdist workers, a file to a worker (decision 0089), then the
# tests marked `alone` in this process (schemathesis reports its operations as subtests, and
# xdist drops a subtest's failure). pytest exits 5 when it collected nothing: that is a broken
# run for the first command; the second may find nothing once no test needs to run alone.
# A worker that dies (a crash in a C extension) ends the run at once, naming the test it was
# running: pytest-xdist 3.8 replaces it, and under `--dist loadfile` the replacement can wait
# forever (pytest-xdist#1323), which turned one crash into a 90-minute CI timeout.
TEST_WORKERS ?= 2
XDIST := -n $(TEST_WORKERS) --dist loadfile --max-worker-restart=0
test: install
	$(PYTEST) -q $(XDIST) -m "not alone" tests; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing the run"; exit 1; fi; \
	$(PYTEST) -q -m alone tests; rc2=$$?; [ $$rc2 -eq 5 ] && rc2=0; \
	[ $$rc -ne 0 ] && exit $$rc; exit $$rc2

# One tier at a time, the same way: on the workers, then its `alone` tests in this process.
# A tier (or its `alone` part) that has no tests exits 5: that is not a failure.
test-unit test-integration test-infra test-e2e test-browser: install
	$(PYTEST) -q $(XDIST) -m "$(subst test-,,$@) and not alone" tests; \
	rc=$$?; [ $$rc -eq 5 ] && rc=0; \
	$(PYTEST) -q -m "$(subst test-,,$@) and alone" tests; rc2=$$?; [ $$rc2 -eq 5 ] && rc2=0; \
	[ $$rc -ne 0 ] && exit $$rc; exit $$rc2

# Import contracts (pyproject.toml, decision 0031): layers, no dev tooling in the core, no cycles.
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	PYTHONPATH=layers/core:devtools:. $(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy

bench: install
	$(BIN)/python bench/receiver.py
	$(BIN)/python bench/fanout.py
	$(BIN)/python bench/deliver.py

# Minutes each, whole stacks of processes: see docs/reliability.md. The load run needs wrk.
bench-coldstart: install
	$(BIN)/python bench/coldstart.py

bench-pipeline: install
	$(BIN)/python bench/pipeline.py

bench-load: install
	$(BIN)/python bench/load.py

# Open loop (fixed rates, latency from schedule): where errors begin. See docs/reliability.md.
.PHONY: bench-openloop
bench-openloop: install
	$(BIN)/python bench/openloop.py --drain-between

bench-chaos: install
	$(BIN)/python bench/chaos.py --events 10000

# The typed clients from docs/openapi.json (decision 0064): clients/python (openapi-python-client)
# and clients/typescript/src/schema.ts (openapi-typescript). Regenerate docs/openapi.json first
# when the routes change (tests/integration/test_api_openapi.py says how).
clients: install
	$(BIN)/python clients/generate.py

# Wheels and sdists of the `hookline` package (producer library and CLI) and of the Python
# client, the TypeScript client's npm tarball, all in dist/; twine checks what PyPI would.
dist: install
	rm -rf dist
	$(BIN)/python -m build --no-isolation --outdir dist .
	$(BIN)/python -m build --no-isolation --outdir dist clients/python
	$(BIN)/twine check --strict dist/*.whl dist/*.tar.gz
	cd clients/typescript && npm run build && npm pack --pack-destination ../../dist

# Every installed dependency's licence against the allowlist (docs/licences.md).
licences: install
	$(PYTEST) -q tests/unit/test_licences.py

clean:
	rm -rf $(VENV) .hookline cdk.out dist clients/typescript/node_modules clients/typescript/dist

-include infra/Makefile.infra
-include local.mk
