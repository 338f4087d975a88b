# Two commands: `make book` (the whole book on the default CPU profile) and `make test`.
# Each creates the virtual environment .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PROFILE ?= default
PYTEST_ARGS ?=
CHAPTERS ?=
LAB_ARGS ?=
# JupyterLab refuses to start as root without --allow-root; a normal user does not need it.
USER_ID ?= $(shell id -u)
LAB_ROOT := $(if $(filter 0,$(USER_ID)),--allow-root,)
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings

.PHONY: book test audit fuzz lab student clean distclean env verify reference calibrate robustness

# The last python line builds, for pinned numerics on a CPU that is not Intel's, the library that lets MKL take its
# AVX2 branch there (needs cc; medeval.runtime.numerics.mkl_intel_branch_library).
$(BIN)/medeval: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/python -c "from medeval.runtime.numerics import mkl_intel_branch_library; mkl_intel_branch_library()"
	touch $(BIN)/medeval

env: $(BIN)/medeval

book: env
	$(BIN)/medeval book --profile $(PROFILE)

test: env
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The browser audit of tests/book/test_browser.py (headless Chromium) on the book `make book` built for PROFILE,
# instead of the tests' smoke build: every page opened, tables in their column, no stray output, key findings,
# one numbering, at most 15 screens of main path per chapter.
audit: env
	MEDEVAL_AUDIT_BOOK=_build/book/$(PROFILE)/_build/html $(BIN)/python -m pytest -p no:cacheprovider -q -n 0 \
		tests/book/test_browser.py $(PYTEST_ARGS)

# Same numbers on any machine: `make verify` compares this build (PROFILE) with results/reference/<profile>.json and
# fails on a changed verdict or number. The other three write committed files, on purpose only, from builds made
# on the reference machine; review their diffs like code.
verify: env
	$(BIN)/medeval verify --profile $(PROFILE)

reference: env
	$(BIN)/medeval verify --profile $(PROFILE) --update

calibrate: env
	$(BIN)/medeval calibrate --profile smoke --profile default

SEEDS ?= 5
robustness: env
	$(BIN)/medeval robustness all --seeds $(SEEDS) --profile $(PROFILE) --update

# The executed parameter fuzz: FUZZ_EXAMPLES draws per chapter from the `fuzz:` bounds of params/*.yaml, each run
# under the smoke profile (refused before compute, or run to completion); statistics in _build/fuzz/<chapter>.json.
FUZZ_EXAMPLES ?= 8
fuzz: env
	MEDEVAL_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -p no:cacheprovider -q \
		tests/runtime/test_param_fuzz.py -k bounded $(PYTEST_ARGS)

# The chapters' jupytext sources (notebooks/*.py) open as notebooks with a double click (config/jupyterlab-overrides.json),
# paired with an .ipynb that keeps their outputs (notebooks/jupytext.toml); student notebooks open as usual.
lab: env
	mkdir -p $(LAB_SETTINGS)
	cp config/jupyterlab-overrides.json $(LAB_SETTINGS)/overrides.json
	$(BIN)/jupyter lab --notebook-dir=. --ServerApp.open_browser=False $(LAB_ROOT) $(LAB_ARGS)

# Student notebooks (solutions replaced by stubs, checks after each exercise) and the teacher's versions, in
# _build/teaching/{student,teacher}/<chapter>/; `make student CHAPTERS="03-eve 04b-evaluation-measures"` for some.
student: env
	$(BIN)/medeval student $(CHAPTERS)

clean:
	rm -rf _build _runs book/_build .pytest_cache .ruff_cache
	find . -name __pycache__ -type d -prune -not -path "./$(VENV)/*" -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
