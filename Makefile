.PHONY: run test test-fast lint docs setup
# The two commands of the README. Each one sets everything up first, idempotently.

run: setup
	.venv/bin/explorer demo

# Lint, format, types and the layering contracts first (seconds), then the tests on two workers (one a core),
# a test file each at a time so a file's module fixtures (a browser, an app server) are made once, dealt in the
# order tests/conftest.py gives (slow files first; xdist's own reorder, by test count, dealt the browser's few long
# tests last, with one worker idle beside them). The slowest twenty are named at the end: CI has 20 minutes, and
# this is where they go. CI (CI=true) leaves out the tests of the real local model, whose server set-up there
# skips building (scripts/setup.sh): they take longer than CI has on two cores.
test: setup lint
	.venv/bin/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=20 $(if $(filter true,$(CI)),-m "not real_model")

# The same checks and tests without what is slow to start: a browser, MiniLM, a real local model, PostgreSQL
# (tests/conftest.py marks each test by what it asks for). What a change is checked with before CI checks the rest;
# its set-up skips building the real local model, which none of its tests uses (`make test` builds it).
FAST = not browser and not minilm and not real_model and not postgres
test-fast: export SKIP_LOCAL_MODEL ?= 1
test-fast: setup lint
	.venv/bin/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=10 -m "$(FAST)"

# The references written from the code: every command's options (docs/cli.md) and every setting
# (docs/reference/settings.md). A test fails while either is stale; this is what it asks you to run.
docs:
	.venv/bin/python scripts/gen_cli_reference.py
	.venv/bin/python scripts/gen_settings_reference.py

lint:
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/mypy
	.venv/bin/lint-imports

setup:
	@bash scripts/setup.sh
