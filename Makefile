# The single entry point of the series. `make help` lists what each target does.
# Every target that needs Python creates .venv first (if missing), so a fresh clone works as is.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# The torch build installed into a new .venv when it has none. A CPU-only runner can add
# TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu to avoid the multi-GB CUDA build.
TORCH_VERSION ?= 2.13.0
TORCH_INDEX_URL ?=
STAMP := $(VENV)/.installed
WORKERS ?= 2
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg

.DEFAULT_GOAL := help
.PHONY: help venv run test test-unit test-notebooks lab outputs sync bench-suite clean

help: ## List the targets and what each does
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-15s %s\n", $$1, $$2}'

venv: $(STAMP) ## Create .venv and install torch, the lessons' and the tests' requirements

$(STAMP): requirements.txt requirements-dev.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q --disable-pip-version-check \
		"torch==$(TORCH_VERSION)" $(if $(TORCH_INDEX_URL),--index-url $(TORCH_INDEX_URL))
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	@touch $@

run: $(STAMP) ## Run every lesson on this machine's best device into build/run/ and print a table
	$(PY) tools/execute.py run

test: $(STAMP) ## Unit tests of utils.py and the tools, then strict nbval over every notebook
	$(PY) -m pytest tests notebooks $(NBVAL) -n $(WORKERS) --dist loadscope

test-unit: $(STAMP) ## Only the unit tests (seconds)
	$(PY) -m pytest tests

test-notebooks: $(STAMP) ## Only strict nbval over every notebook
	$(PY) -m pytest notebooks $(NBVAL) -n $(WORKERS) --dist loadscope

lab: $(STAMP) ## Open the lessons in JupyterLab
	$(VENV)/bin/jupyter lab notebooks/

outputs: $(STAMP) ## Re-create the stored outputs by running every notebook on the CPU reference
	$(PY) tools/sync_notebooks.py
	$(PY) tools/execute.py outputs

sync: $(STAMP) ## Regenerate headers, setup cells, navigation and the README lesson table
	$(PY) tools/sync_notebooks.py

bench-suite: $(STAMP) ## Benchmark: strict nbval time against notebooks that only import torch
	$(PY) tools/suite_speed.py --workers $(WORKERS)

clean: ## Remove build/ (keeps .venv)
	rm -rf build
