# GPU Performance Lab — install, test and build.
#
#   make book            create .venv, install, build the book WITH execution into _build/html
#   make test            CPU tests (GPU tests deselected)      make test-gpu   all tests
#   make test-browser    open every page of _build/html in headless Chromium, network off, and check it
#   make browser         install Debian's chromium (apt-get) if /usr/bin/chromium is missing
#   make record          re-measure on a GPU and write results/ (ARGS="..." passes options)
#   make book-record     on a GPU: build the book live and record what it measured
#   make sanitize        run the kernels under compute-sanitizer
#   make compile-report  compile every kernel with NVRTC (no GPU needed) and report resources
#   make stale           list recorded results whose kernel source has changed
#   make lab             open the chapters as notebooks in Jupyter Lab (live, each measures its
#                        reader plan, about a minute; PERFLAB_PLAN=full make lab: the full plans)
#   make wheelhouse      download into .whl/ the wheels an offline GPU machine needs
#   make wheelhouse-install PY=python3   install them there, with no network
#   make clean           remove _build and caches (distclean also removes .venv and .whl)
#
# With an existing interpreter instead of .venv (e.g. an offline machine whose packages
# came from the wheelhouse):  make book PY=python3
# Then nothing is created or installed; the package is found through PYTHONPATH=lib.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

# The interpreter that creates .venv (3.11 or newer).
BOOTSTRAP ?= python3
VENV ?= .venv
# auto: install requirements-gpu.txt when `nvidia-smi -L` lists a GPU; 1 or 0 to force.
GPU ?= auto
# Extra arguments for pytest or `python -m perflab ...`, e.g. make record ARGS="sgemm".
ARGS ?=
# Nitpicky, warnings are errors, but report every warning before failing; --all re-reads
# every page, since a change under results/, kernels/ or lib/ leaves the sources unchanged.
JB_FLAGS ?= -n -W --keep-going --all

ifdef PY
  PYTHON  := $(PY)
  ENV     :=
  export PYTHONPATH := $(CURDIR)/lib$(if $(PYTHONPATH),:$(PYTHONPATH))
else
  PYTHON  := $(VENV)/bin/python
  ENV     := $(VENV)/.installed
endif

# jupyter-book has no `python -m` entry; call its CLI through the chosen interpreter so
# PY=... works even where the interpreter's scripts are not on PATH.
JB := $(PYTHON) -c 'import sys; from jupyter_book.cli.main import main; sys.exit(main())'

export PERFLAB_ROOT := $(CURDIR)
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: help venv book book-record test test-gpu test-browser browser record sanitize compile-report stale clean distclean wheelhouse wheelhouse-install lab

help:
	@awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' $(firstword $(MAKEFILE_LIST))

venv: $(ENV)

# The stamp is rebuilt when a requirements file or pyproject.toml changes.
$(VENV)/.installed: requirements.txt requirements-gpu.txt pyproject.toml
	@$(strip $(BOOTSTRAP)) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed, found " + sys.version.split()[0] + "; try make BOOTSTRAP=python3.12")'
	@if [ ! -x $(VENV)/bin/python ]; then echo "creating $(VENV) with $$($(strip $(BOOTSTRAP)) --version)"; $(strip $(BOOTSTRAP)) -m venv $(VENV); fi
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -r requirements.txt
	@gpu=$(strip $(GPU)); \
	if [ "$$gpu" = auto ]; then \
	  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then gpu=1; else gpu=0; fi; \
	fi; \
	if [ "$$gpu" = 1 ]; then \
	  echo "a GPU is present: installing requirements-gpu.txt (CUDA libraries from pip)"; \
	  $(VENV)/bin/python -m pip install --quiet -r requirements-gpu.txt; \
	else \
	  echo "no GPU here: skipping requirements-gpu.txt (the book replays recorded results)"; \
	fi
	$(VENV)/bin/python -m pip install --quiet --no-build-isolation --no-deps -e .
	@touch $@

# PERFLAB_BUILD=1: explorers render as static blocks that work without a kernel.
# PERFLAB_FIGURE_LOG: every figure drawn logs its smallest text (make test-browser checks it).
book: $(ENV)
	@mkdir -p _build && rm -f _build/figure-text.jsonl
	PERFLAB_BUILD=1 PERFLAB_FIGURE_LOG=$(CURDIR)/_build/figure-text.jsonl $(JB) build . $(JB_FLAGS)
	@echo "book: $(CURDIR)/_build/html/index.html"

# On a GPU: build the book live and record what it measured into results/ (one run id):
# the full plans, which results/ hold (a live page measures its reader plan by default).
book-record: $(ENV)
	PERFLAB_MODE=live PERFLAB_RECORD=1 PERFLAB_PLAN=full PERFLAB_BUILD=1 \
	PERFLAB_RUN_ID=$$($(PYTHON) -c 'import uuid; print(uuid.uuid4().hex[:12])') \
	$(JB) build . $(JB_FLAGS)

test: $(ENV)
	$(PYTHON) -m pytest -m "not gpu" $(ARGS)

test-gpu: $(ENV)
	PERFLAB_REQUIRE_GPU=1 $(PYTHON) -m pytest $(ARGS)

# The built book in headless Chromium (tests/browser), every page from disk and over HTTP:
# requests leaving the book, console errors, math left as TeX or MathJax error boxes,
# content or code wider than the column, broken table cells, pages over 12,000 px, the
# word "seed", explorers that do not answer, figure text under 9 pt (make book's log).
# Full-page screenshots and heights.json go to _build/screenshots/.
test-browser: $(ENV) browser
	@test -f _build/html/index.html || { echo "make test-browser: _build/html/index.html is missing: run make book first" >&2; exit 1; }
	$(PYTHON) -m pytest tests/browser $(ARGS)

# Debian's chromium, from apt: the browser is never downloaded from anywhere else (and the
# emoji font, so the screenshots show the execution table's status marks).
browser:
	@if [ ! -x /usr/bin/chromium ] || ! dpkg -s fonts-noto-color-emoji >/dev/null 2>&1; then \
	  command -v apt-get >/dev/null 2>&1 || { echo "make browser: /usr/bin/chromium is missing and there is no apt-get: install Chromium as /usr/bin/chromium" >&2; exit 1; }; \
	  if [ "$$(id -u)" = 0 ]; then sudo=; \
	  elif command -v sudo >/dev/null 2>&1; then sudo=sudo; \
	  else echo "make browser: /usr/bin/chromium is missing and installing it needs root: run 'apt-get install chromium' as root, or make browser where sudo works" >&2; exit 1; fi; \
	  $$sudo apt-get update -q; \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium fonts-noto-color-emoji; \
	fi

record: $(ENV)
	$(PYTHON) -m perflab record $(ARGS)

sanitize: $(ENV)
	$(PYTHON) -m perflab sanitize $(ARGS)

compile-report: $(ENV)
	$(PYTHON) -m perflab compile-report $(ARGS)

# Jupyter Lab with the chapters as notebooks (jupytext opens chapters/*.md directly).
# JupyterLab is not in requirements.txt (CI never needs it): installed here on first use.
lab: $(ENV)
	@$(PYTHON) -c 'import jupyterlab' 2>/dev/null || $(PYTHON) -m pip install --quiet 'jupyterlab>=4'
	$(PYTHON) -m jupyterlab --notebook-dir=$(CURDIR) $(ARGS)

stale: $(ENV)
	$(PYTHON) -m perflab stale $(ARGS)

# A Python 3.12 interpreter that resolves the wheels for the offline machine's CPython 3.12.
PY312 ?= python3.12
wheelhouse:
	PY312=$(PY312) bash scripts/wheelhouse.sh

# On an offline machine: install the wheelhouse into the interpreter given as PY.
WHEEL_DIR ?= /tmp/perflab-wheels
wheelhouse-install:
	@test -n "$(PY)" || { echo "usage: make wheelhouse-install PY=python3" >&2; exit 1; }
	mkdir -p $(WHEEL_DIR) && tar -xJf .whl/wheels.tar.xz -C $(WHEEL_DIR)
	$(PYTHON) -m pip install --no-index --find-links $(WHEEL_DIR) \
	  'jupyter-book>=1.0.4,<2' ipykernel ipywidgets jupytext nvtx nvidia-cuda-nvdisasm \
	  altair vl-convert-python anywidget django-static-mathjax cffi

clean:
	rm -rf _build .pytest_cache
	find . -path ./$(VENV) -prune -o -type d \( -name __pycache__ -o -name .ipynb_checkpoints \) -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) .whl lib/*.egg-info
