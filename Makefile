# The two set-up commands of the README: `make up` and `make test`.
# Each step runs when its inputs changed (ADR 0014): the virtualenvs when a pyproject file or
# HYP_VERSION changed (stamp files in the venvs), the console when web/ or the API's OpenAPI
# document changed. A fresh machine has no stamps, so it runs every step.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: up test test-fast install install-test test-deps lint console hyp-venv FORCE

# The web console (web/) is built into the package when its build is missing or older than its
# sources or the API it is typed against (docs/console.md): the OpenAPI document is dumped on
# every run and replaces web/openapi.json only when it differs, so a change in the server that
# leaves the API as it was does not rebuild the console. Needs Node.js 20+ and npm.
NPM ?= npm
CONSOLE := src/podplane/web/static/console/index.html
CONSOLE_SRC := $(shell find web/src web/scripts web/index.html web/package.json web/vite.config.ts \
	web/tsconfig.json -type f -not -path '*/generated/*' 2>/dev/null)
INSTALLED := $(VENV)/.installed
INSTALLED_TEST := $(VENV)/.installed-test

# Packages are installed with uv (ADR 0014): a fresh test environment takes about 5 s instead of
# about 55 with pip. uv does not read pip's configuration, so where it cannot reach its index
# (a private mirror set up for pip only) the same install runs again with pip.
UV := $(BIN)/uv
# $(call pip_install,venv,packages[,uv-only options])
define pip_install
$(UV) pip install -q --python $(1)/bin/python $(3) $(2) || $(1)/bin/pip install -q $(2)
endef

$(BIN)/python:
	$(PY) -m venv $(VENV)

$(UV): | $(BIN)/python
	$(BIN)/pip install -q uv

install: $(INSTALLED)

$(INSTALLED): pyproject.toml sandbox/pyproject.toml | $(UV)
	$(call pip_install,$(VENV),-e . -e ./sandbox)
	touch $@

# The two virtualenvs are installed side by side (the hyp one takes longest).
install-test:
	@$(MAKE) --no-print-directory -j2 $(INSTALLED_TEST) hyp-venv

# What `make test` needs: the hyp virtualenv beside the test one, then the console.
test-deps: $(INSTALLED_TEST)
	@$(MAKE) --no-print-directory console

$(INSTALLED_TEST): pyproject.toml sandbox/pyproject.toml testkit/pyproject.toml | $(UV)
	$(call pip_install,$(VENV),-e '.[test]' -e ./sandbox -e ./testkit)
	touch $@ $(INSTALLED)

# The official HyperPod CLI (`hyp`), a judge in tests/hyp. Its pins (pytest, ruff, click) clash
# with ours, so it gets its own virtualenv; never a dependency of the product.
HYP_VENV ?= .venv-hyp
HYP_VERSION ?= 3.12.0
HYP_STAMP := $(HYP_VENV)/.installed-$(HYP_VERSION)

hyp-venv: $(HYP_STAMP)

# Byte-compiled at install as pip does: hyp's sources have invalid escape sequences, and compiling
# them on first use would print SyntaxWarnings into the output the tests read.
$(HYP_STAMP): | $(UV)
	test -x $(HYP_VENV)/bin/pip || $(PY) -m venv $(HYP_VENV)
	$(call pip_install,$(HYP_VENV),sagemaker-hyperpod==$(HYP_VERSION),--compile-bytecode)
	rm -f $(HYP_VENV)/.installed-*
	touch $@

console: $(CONSOLE)

web/node_modules/.package-lock.json: web/package-lock.json
	@command -v $(NPM) >/dev/null || { echo "building the console needs Node.js 20+ and npm"; exit 1; }
	cd web && $(NPM) ci --no-audit --no-fund --loglevel=error

web/openapi.json: FORCE | install
	$(BIN)/python web/scripts/dump_openapi.py $@.new
	if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi

$(CONSOLE): $(CONSOLE_SRC) web/openapi.json web/node_modules/.package-lock.json | install
	cd web && $(NPM) run --silent gen && $(NPM) run --silent build

up: install console
	$(BIN)/podplane up

LINT := $(BIN)/ruff check src sandbox/src tests bench && $(BIN)/lint-imports && \
	$(BIN)/mypy src/podplane testkit/src

lint: install-test
	$(LINT)

# In parallel (pytest-xdist): most tests wait on subprocesses, sockets and the sandbox, so more
# workers than cores pays. `loadfile` keeps each module on one worker (its module-scoped stack
# starts once; tests/conftest.py). TEST_WORKERS=0 runs serially; PYTEST_ARGS adds options.
# Lint runs beside the tests (its output after theirs); either failing fails the run. Each run
# prints the cost per module and checks tests/budget.toml (tests/plugins/, ADR 0014).
# Failures print Python's own tracebacks (--tb=native): pytest's source excerpts parse files
# with `ast`, and on CPython 3.11.7 that once raised "AST constructor recursion depth
# mismatch" inside a worker, which ended the whole run with an internal error.
TEST_WORKERS ?= 4
PYTEST_ARGS ?=
PYTEST := $(BIN)/pytest -q --tb=native -rfE $(if $(filter 0,$(TEST_WORKERS)),-p no:xdist,-n $(TEST_WORKERS) --dist loadfile)

test:
	@$(MAKE) --no-print-directory -j2 test-deps hyp-venv
	@mkdir -p build
	@( $(LINT) ) >build/lint.log 2>&1 & lint=$$!; \
	$(PYTEST) --durations=25 $(PYTEST_ARGS); tests=$$?; \
	wait $$lint; linted=$$?; echo "== lint (ran beside the tests)"; cat build/lint.log; \
	[ $$linted -eq 0 ] || echo "lint failed"; [ $$tests -eq 0 ] && [ $$linted -eq 0 ]

# The tests that start no sandbox, server, browser or subprocess (a minute or two).
test-fast: install-test
	$(PYTEST) -m "not e2e" $(PYTEST_ARGS)
