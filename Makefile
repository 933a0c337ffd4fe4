.PHONY: run test setup bench
# The two commands of the README. Each one sets everything up first, idempotently.

run: setup
	.venv/bin/explorer demo

test: setup
	.venv/bin/python -m pytest

setup:
	@bash scripts/setup.sh

bench: setup
	.venv/bin/python -m bench
