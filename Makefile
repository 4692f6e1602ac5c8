# The two set-up commands of the README: `make up` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: up test install install-test lint console hyp-venv

# The web console (web/) is built into the package when its build is missing or older than its
# sources or the API it is typed against (docs/console.md). Needs Node.js 20+ and npm.
NPM ?= npm
CONSOLE := src/podplane/web/static/console/index.html
CONSOLE_SRC := $(shell find web/src web/scripts web/index.html web/package.json web/vite.config.ts \
	web/tsconfig.json -type f -not -path '*/generated/*' 2>/dev/null) \
	$(shell find src/podplane/api src/podplane/domain -name '*.py' 2>/dev/null)

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install -q -e . -e ./sandbox

install-test: $(BIN)/python hyp-venv
	$(BIN)/pip install -q -e '.[test]' -e ./sandbox -e ./testkit

# The official HyperPod CLI (`hyp`), a judge in tests/hyp. Its pins (pytest, ruff, click) clash
# with ours, so it gets its own virtualenv; never a dependency of the product.
HYP_VENV ?= .venv-hyp
HYP_VERSION ?= 3.12.0

hyp-venv: $(HYP_VENV)/bin/hyp

$(HYP_VENV)/bin/hyp:
	$(PY) -m venv $(HYP_VENV)
	$(HYP_VENV)/bin/pip install -q sagemaker-hyperpod==$(HYP_VERSION)

console: $(CONSOLE)

web/node_modules/.package-lock.json: web/package-lock.json
	@command -v $(NPM) >/dev/null || { echo "building the console needs Node.js 20+ and npm"; exit 1; }
	cd web && $(NPM) ci --no-audit --no-fund --loglevel=error

$(CONSOLE): $(CONSOLE_SRC) web/node_modules/.package-lock.json | install
	$(BIN)/python web/scripts/dump_openapi.py web/openapi.json
	cd web && $(NPM) run --silent gen && $(NPM) run --silent build

up: install console
	$(BIN)/podplane up

lint: install-test
	$(BIN)/ruff check src sandbox/src tests bench
	$(BIN)/lint-imports
	$(BIN)/mypy src/podplane testkit/src

# In parallel (pytest-xdist): most tests wait on subprocesses, sockets and the sandbox, so more
# workers than cores pays. `loadfile` keeps each module on one worker (its module-scoped stack
# starts once; tests/conftest.py). TEST_WORKERS=0 runs serially; PYTEST_ARGS adds options.
TEST_WORKERS ?= 4
PYTEST_ARGS ?=

test: install-test console lint
	$(BIN)/pytest -q --durations=25 $(if $(filter 0,$(TEST_WORKERS)),-p no:xdist,-n $(TEST_WORKERS) --dist loadfile) $(PYTEST_ARGS)
