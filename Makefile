# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo install docs test lint bench clean browser sandbox conformance

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	ASSAY_HOME=.assay $(BIN)/assay run examples/quickstart/eval.yaml
	ASSAY_HOME=.assay $(BIN)/assay run examples/quickstart/agent_eval.yaml
	@echo "assay is installed in $(VENV): call it as $(BIN)/assay, or 'source $(BIN)/activate' first,"
	@echo "or run 'make install' to put 'assay' on your PATH (~/.local/bin)."

# The docs site, built strictly (a warning fails it) into site/; the CLI reference regenerated first.
docs: $(VENV)/.installed-dev
	$(BIN)/python tools/cli_doc.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# `assay` for this user, as pipx would: a venv of its own under ~/.local/share, linked from ~/.local/bin.
TOOL_HOME ?= $(HOME)/.local/share/assay
TOOL_BIN ?= $(HOME)/.local/bin
install:
	$(PYTHON) -m venv $(TOOL_HOME)/venv
	$(TOOL_HOME)/venv/bin/pip install -q --upgrade pip
	$(TOOL_HOME)/venv/bin/pip install -q .
	mkdir -p $(TOOL_BIN)
	ln -sf $(TOOL_HOME)/venv/bin/assay $(TOOL_BIN)/assay
	@echo "installed: $(TOOL_BIN)/assay ($$($(TOOL_BIN)/assay --version))"
	@case ":$$PATH:" in *":$(TOOL_BIN):"*) ;; *) echo "add $(TOOL_BIN) to your PATH to call it as 'assay'";; esac

# The UI test drives Debian's Chromium; install it when missing and we may (CI runs as root).
browser:
	@command -v chromium >/dev/null || [ "$$(id -u)" != 0 ] || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)

# Untrusted code (python graders, code evaluators) runs under Debian's bubblewrap; promptfoo's ruby
# assertions under Debian's Ruby, inside it.
sandbox:
	@(command -v bwrap >/dev/null && command -v ruby >/dev/null) || [ "$$(id -u)" != 0 ] || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap ruby >/dev/null)

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests bench tools examples
	$(BIN)/ruff format --check src tests bench tools examples
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache
	$(BIN)/python tools/import_cycles.py

# A worker per core, at least three and at most four (pytest-xdist): most tests wait on servers and
# subprocesses, so even two cores keep a third worker busy (on two cores: 1,267 s with two workers,
# 1,154 s with three). The Ray tests share one worker (one local cluster).
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -lt 3 ] && n=3; [ $$n -gt 4 ] && n=4; echo $$n)
test: lint browser sandbox
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup

# Microsoft's samples run in a venv of their own: the packages their READMEs ask for, at the sdist's
# version (azure-monitor-opentelemetry pins an OpenTelemetry the test suite's venv must not take).
SAMPLES_VENV ?= .venv-samples
$(SAMPLES_VENV)/.installed:
	$(PYTHON) -m venv $(SAMPLES_VENV)
	$(SAMPLES_VENV)/bin/pip install -q --upgrade pip
	$(SAMPLES_VENV)/bin/pip install -q "azure-ai-projects==2.10.0" azure-identity python-dotenv aiohttp Pillow \
		azure-monitor-opentelemetry azure-monitor-query azure-mgmt-authorization azure-mgmt-resource \
		azure-mgmt-cognitiveservices azure-storage-blob
	touch $@

# Real promptfoo from npm, with the Node it needs (22, also from npm), for the differential suite.
PROMPTFOO_HOME ?= .conformance/promptfoo
$(PROMPTFOO_HOME)/.installed:
	mkdir -p $(PROMPTFOO_HOME)
	cd $(PROMPTFOO_HOME) && npm install --silent --no-audit --no-fund promptfoo@0.123.1 node@22
	touch $@

# Inspect AI in a venv of its own: it writes logs assay imports, and reads and serves the logs assay writes.
INSPECT_VENV ?= .venv-inspect
$(INSPECT_VENV)/.installed:
	$(PYTHON) -m venv $(INSPECT_VENV)
	$(INSPECT_VENV)/bin/pip install -q --upgrade pip
	$(INSPECT_VENV)/bin/pip install -q "inspect_ai==0.3.285"
	touch $@

# What others wrote, run against assay: Microsoft's azure-ai-projects samples, real promptfoo and
# Inspect AI (N of M, each miss's reason).
conformance: $(VENV)/.installed-dev $(SAMPLES_VENV)/.installed $(PROMPTFOO_HOME)/.installed $(INSPECT_VENV)/.installed sandbox
	$(BIN)/pytest -m conformance tests/conformance -s

$(VENV)/.installed-bench: $(VENV)/.installed-dev
	$(BIN)/pip install -q -e '.[dev,bench]'
	touch $@

bench: $(VENV)/.installed-bench
	$(BIN)/python bench/nlp_throughput.py
	$(BIN)/python bench/judge_throughput.py
	$(BIN)/python bench/sampling.py
	$(BIN)/python bench/sandbox.py
	$(BIN)/python bench/api_load.py
	$(BIN)/python bench/simulation.py
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/ui_paging.py
	$(BIN)/python bench/run_overhead.py
	$(BIN)/python bench/run_cost.py
	$(BIN)/python bench/spread.py
	$(BIN)/python bench/gate_false_alarms.py

clean:
	rm -rf $(VENV) $(SAMPLES_VENV) $(INSPECT_VENV) .conformance .assay .pytest_cache .mypy_cache .ruff_cache
