# The two set-up commands of the README: `make up` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: up test install install-test lint

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install -q -e .

install-test: $(BIN)/python
	$(BIN)/pip install -q -e '.[test]'

up: install
	$(BIN)/podplane up

lint: install-test
	$(BIN)/ruff check src tests
	$(BIN)/lint-imports
	$(BIN)/mypy src/podplane/domain src/podplane/services src/podplane/ops

test: install-test lint
	$(BIN)/pytest -q
