# Chain Designer: `make run` serves the app, `make test` runs the checks CI runs.
# Both install what they need on a fresh Debian machine and skip what is already there.
# `make test-fast` is the quick local loop: every test but the browser ones, in parallel.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

PYTHON ?= python3
PORT ?= 8000
VENV := .venv
BIN := $(VENV)/bin
HTMX := static/vendor/htmx/htmx.min.js
# The SARIF 2.1.0 JSON Schema that `chain-designer lint --format sarif` is tested against
# (tests/test_cli.py): the one file, out of a package on the npm registry, checked.
SARIF_SCHEMA := var/schemas/sarif-2.1.0.json
SARIF_PACKAGE := @microsoft/jest-sarif@1.0.0-beta.0
SARIF_SHA256 := 2d99159ae54a3eea97f81781cff48780548657c35949f4b7f25e99a2ba4de4f8
# The JUnit XML Schema (Jenkins' junit-10.xsd) the harness's JUnit report is tested against
# (tests/harness/test_report.py): the one file, out of pytest's source package on PyPI, checked.
JUNIT_SCHEMA := var/schemas/junit-10.xsd
JUNIT_SDIST := pytest==8.3.5
JUNIT_SHA256 := a1a816f58d1bf95ebabf371994df0b9246dee66ea9572fbec4f9296f1b2c0ff6
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# apt-get update only when there are no package lists yet, or when an install
# fails against stale ones.
define apt_install
	{ ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1 || $(SUDO) apt-get update; } && \
	{ $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y $(1) || \
	  { $(SUDO) apt-get update && \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y $(1); }; }
endef

.PHONY: run test test-fast cli-check deploy-check graphviz chromium static clean mutate

# Test processes (pytest-xdist); `make test-fast WORKERS=auto`. Each has its own test
# database and Celery queue (tests/conftest.py).
WORKERS ?= 2

# Test processes keep compiled bytecode (in __pycache__, ignored by git) even where
# the environment turns it off: otherwise each process recompiles every module and
# rewrites every test module's asserts, about 5 s of each run. Python reads an empty
# value as unset.
test test-fast: export PYTHONDONTWRITEBYTECODE :=

run: $(VENV)/.installed $(HTMX) graphviz
	DEBUG=1 $(BIN)/python manage.py migrate --noinput
	@mkdir -p var; DEBUG=1 $(BIN)/python manage.py demo_account > var/demo-account.txt
	@for f in fixtures/*.yaml fixtures/*.md; do \
	  [ -e "$$f" ] && [ "$$(basename "$$f")" != README.md ] || continue; \
	  DEBUG=1 $(BIN)/python manage.py chain import "$$f" --team demo || echo "warning: could not import $$f"; \
	done
	@mkdir -p var; export DEBUG=1; \
	$(BIN)/python -m designer.supervise worker --concurrency=2 --loglevel=INFO > var/celery.log 2>&1 & \
	worker=$$!; \
	trap 'kill $$worker 2>/dev/null || true; wait $$worker 2>/dev/null || true' EXIT; \
	echo; echo "Chain Designer: http://127.0.0.1:$(PORT)/  (Celery worker log: var/celery.log)"; \
	cat var/demo-account.txt; echo; \
	$(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

test: $(VENV)/.installed-test $(HTMX) $(SARIF_SCHEMA) $(JUNIT_SCHEMA) graphviz chromium
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -n $(WORKERS) -m "not browser"
	$(BIN)/pytest -n $(WORKERS) -m browser

test-fast: $(VENV)/.installed-test $(HTMX) $(SARIF_SCHEMA) $(JUNIT_SCHEMA) graphviz
	$(BIN)/pytest -q -n $(WORKERS) -m "not browser"

static: $(HTMX)

# A mutation check of a part of the core against the tests that own it (bench/mutate.py,
# docs/benchmarks.md): TARGET runtime (the default: the simulator's runtime against
# tests/core/sim/conformance/ alone, the nine named safety mutants first), graph,
# invariants or lint-commit; GENERIC operator mutants sampled with SEED; each in a
# temporary copy of the tree. Not in CI.
TARGET ?= runtime
GENERIC ?= 30
SEED ?= 0
mutate: $(VENV)/.installed-test
	$(BIN)/python bench/mutate.py --target $(TARGET) --generic $(GENERIC) --seed $(SEED)

# The production setup against this machine's PostgreSQL and Redis: deploy/entrypoint.sh
# (migrations, gunicorn, WhiteNoise, a Celery worker) with DEBUG off, then sign-in, one
# edit and one campaign over HTTP (deploy/check.py).
deploy-check: $(VENV)/.installed-test $(HTMX) graphviz
	$(BIN)/python deploy/check.py

# The console script on its own (docs/ci.md): this project installed into a new virtual
# environment, then a lint with an empty environment. Needs the package index.
cli-check:
	rm -rf var/cli-check
	$(PYTHON) -m venv var/cli-check
	var/cli-check/bin/pip install -q .
	rm -rf build
	env -i PATH=/usr/bin:/bin HOME=$$PWD/var/cli-check \
	  var/cli-check/bin/chain-designer lint fixtures/flight-roundtrip.yaml --json

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -e '.[test]'
	touch $@ $(VENV)/.installed

node_modules/.installed: package.json $(wildcard package-lock.json)
	if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
	touch $@

# htmx is served from our static files; the copy is generated (see .gitignore).
$(HTMX): node_modules/.installed
	mkdir -p $(dir $@)
	cp node_modules/htmx.org/dist/htmx.min.js $@

graphviz:
	@command -v dot >/dev/null || { $(call apt_install,graphviz); }

chromium:
	@[ -x /usr/bin/chromium ] || { $(call apt_install,chromium chromium-driver); }

clean:
	rm -rf node_modules static/vendor var/static

$(JUNIT_SCHEMA): $(VENV)/.installed-test
	mkdir -p $(dir $@)
	rm -rf $(dir $@)junit.tmp && mkdir $(dir $@)junit.tmp
	$(BIN)/pip download --quiet --no-deps --no-binary :all: --dest $(dir $@)junit.tmp "$(JUNIT_SDIST)"
	tar -xzf $(dir $@)junit.tmp/*.tar.gz -O --wildcards '*/testing/example_scripts/junit-10.xsd' > $@.part
	rm -rf $(dir $@)junit.tmp
	echo "$(JUNIT_SHA256)  $@.part" | sha256sum --check --quiet -
	mv $@.part $@

$(SARIF_SCHEMA):
	mkdir -p $(dir $@)
	cd $(dir $@) && tarball=$$(npm pack --silent $(SARIF_PACKAGE)) && \
	  tar -xzf "$$tarball" -O package/lib/schemas/sarif-2.1.0-rtm.5.json > $(notdir $@).part && \
	  rm -f "$$tarball" && \
	  echo "$(SARIF_SHA256)  $(notdir $@).part" | sha256sum --check --quiet - && \
	  mv $(notdir $@).part $(notdir $@)
