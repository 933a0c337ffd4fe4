.PHONY: run test setup
# The two commands of the README. Each one sets everything up first, idempotently.

run: setup
	.venv/bin/explorer demo

test: setup
	.venv/bin/python -m pytest

setup:
	@bash scripts/setup.sh

