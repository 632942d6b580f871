# hetero-tutorial: `make lab` to learn, `make test` to check. `make help` lists every target.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BOOK_STAMP := $(VENV)/.installed-book
QUICK_ENV := HETERO_TUTORIAL_QUICK=1
EXTRAS := dev,atari,ray,mujoco
BOOK_EXTRAS := $(EXTRAS),book

.DEFAULT_GOAL := help
.PHONY: help setup setup-book lab test lint unit notebooks run run-quick doctor format lock gpu-wheels gpu-wheels-check clean
.PHONY: docs book book-test setup-browser install-cells install-test

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

setup: $(STAMP) ## create .venv and install the pinned dependencies (only when missing or stale)
setup-book: $(BOOK_STAMP) ## the same with the book's tools (make test needs them), in one pip pass

# One pip pass into .venv with the extras $(1) (a comma-separated list), then every module
# byte-compiled on all cores: where PYTHONDONTWRITEBYTECODE is set (as here), Python would
# otherwise compile torch and Ray from source at every import. pip's own compiling runs on one
# core (88 s for install and compile here, against 38 s + 23 s on two); like pip's, it skips
# the files this Python cannot parse (torch ships one for Python 3.12 only).
define install
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "hetero-tutorial needs Python 3.10 or newer; run: make PYTHON=python3.11 ...")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --no-compile -c constraints.txt -e ".[$(1)]"
	$(BIN)/python -c 'import compileall, sysconfig; compileall.compile_dir(sysconfig.get_paths()["purelib"], quiet=2, workers=0)'
	$(BIN)/python -m ipykernel install --user --name hetero-tutorial --display-name "Python (hetero-tutorial)"
endef

$(STAMP): pyproject.toml constraints.txt
	$(call install,$(EXTRAS))
	touch $(STAMP)

# The book's tools (Sphinx, MyST-NB, Furo, latex2mathml, Playwright): the extra [book], kept
# out of `make setup` so that a learner's `make lab` does not install them. Everything in one
# pass, so that a fresh checkout (CI's) resolves and installs once.
$(BOOK_STAMP): pyproject.toml constraints.txt
	$(call install,$(BOOK_EXTRAS))
	touch $(STAMP) $(BOOK_STAMP)

# Containers often run as root, which Jupyter refuses unless told.
lab: setup ## open JupyterLab on notebooks/
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/

test: setup lint unit notebooks book-test ## lint, unit tests, every notebook under nbmake (quick mode), its outputs checked, the book from them in a browser

lint: setup ## ruff lint and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Two pytest-xdist workers, one per core of a 2-core CI machine: the suite takes about half as
# long (a third worker makes Ray's start time out and the load-sensitive tests fail).
# Tests in one xdist_group (those that start Ray) run on one worker, one after another. The
# 20 slowest are listed (and each notebook's time under nbmake): where the CI minutes go.
# The busy-machine guard's tests run after them, alone: they load every core themselves and
# need the machine quiet otherwise; so does the GPU reference's killed run (a timed dry step).
# The project's own modules are byte-compiled first: with PYTHONDONTWRITEBYTECODE set (as
# here) every process the tests start would compile them from source again (0.1-0.3 s each).
unit: $(BOOK_STAMP) ## unit tests (quick mode, two workers; the notebook-quality checks run in `make notebooks`, the browser's in `make book-test`)
	$(BIN)/python -m compileall -q -j 0 hetero_tutorial tests tools benchmarks >/dev/null
	$(QUICK_ENV) $(BIN)/python -m pytest -q -n 2 --dist loadgroup --durations=20 tests \
		--ignore=tests/test_notebook_quality.py \
		--ignore=tests/test_book_browser.py \
		--ignore=tests/test_busy_guard.py \
		--ignore=tests/test_gpu_reference_kill.py
	$(QUICK_ENV) $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_busy_guard.py \
		tests/test_gpu_reference_kill.py

install-cells: setup ## put the hosted-runtime install cell (tools/docs/hosted.py) into every notebook
	$(BIN)/python -m tools.docs install-cells

install-test: setup ## run the install cell in a fresh venv with only PyTorch and NumPy (minutes)
	HETERO_TUTORIAL_INSTALL_TEST=1 $(BIN)/python -m pytest -q tests/test_hosted.py

# nbmake executes copies in build/nbmake/ (--overwrite fills the copies, never the stored
# notebooks), every figure audited as it is drawn (notebook/figure_audit.py); the quality test
# then reads those outputs instead of executing them again.
# One notebook at a time, in order, the claims ledger last (it reads the records the others
# wrote): each notebook's studies use every core, so two at once would time each other and
# the busy-machine guard (core/machine_load.py) would withhold their verdicts.
SERIES := $(sort $(wildcard notebooks/[0-9][0-9]_*.ipynb))
NBMAKE := $(QUICK_ENV) MPLBACKEND=module://hetero_tutorial.notebook.figure_audit \
	$(BIN)/python -m pytest -q -p no:cacheprovider --nbmake --nbmake-timeout=600 --overwrite --durations=0
notebooks: setup ## every notebook under nbmake (quick mode), one at a time, then check what they printed and the instructor's sheet against their records
	rm -rf build/nbmake && mkdir -p build/nbmake && cp notebooks/[0-9][0-9]_*.ipynb build/nbmake/
	$(NBMAKE) $(addprefix build/nbmake/,$(notdir $(SERIES)))
	HETERO_TUTORIAL_EXECUTED=build/nbmake $(BIN)/python -m pytest -q tests/test_notebook_quality.py
	$(BIN)/python -m tools.docs check-answers

# The repository's press (tools/docs/, outside the package: no wheel holds it) writes the
# generated text and the book; it runs from the repository's root.
docs: setup ## regenerate the README's and docs/'s tables and each notebook's run-time line from data/reference/
	$(BIN)/python -m tools.docs regenerate

book: $(BOOK_STAMP) ## the book (build/book/html/) from the executed notebooks: make run's (full mode), else make test's; TEACHER=1 adds the instructor's sheet
	$(BIN)/python -m tools.docs book $(if $(TEACHER),--teacher)

# make test's own book: from the quick copies nbmake just executed, whatever else build/ holds.
book-test: $(BOOK_STAMP) ## build the book from build/nbmake/ and open every page in headless Chromium (skipped without it)
	$(BIN)/python -m tools.docs book --from build/nbmake
	HETERO_TUTORIAL_BOOK=build/book/html $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_book_browser.py

setup-browser: ## install Debian's Chromium for the browser test (apt-get, as root; nothing if one is there)
	@if command -v chromium >/dev/null 2>&1; then chromium --version; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
		echo "no apt-get here: install Chromium with this system's package manager"; exit 1; \
	elif [ "$$(id -u)" != 0 ]; then echo "installing Chromium needs root: sudo make setup-browser"; exit 1; \
	else apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		chromium >/dev/null \
		&& chromium --version; fi

run: setup ## execute every notebook headless in full mode (build/notebooks/), write the run record
	$(BIN)/python -m hetero_tutorial run

run-quick: setup ## the same, in quick mode
	$(BIN)/python -m hetero_tutorial run --quick

doctor: setup ## pre-flight check for this machine
	$(BIN)/python -m hetero_tutorial doctor

format: setup ## apply ruff's formatting and safe fixes
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

lock: ## regenerate constraints.txt from a clean virtual environment (torch pinned to 2.13.0)
	rm -rf build/lock-venv
	$(PYTHON) -m venv build/lock-venv
	build/lock-venv/bin/python -m pip install --quiet "torch==2.13.0" -e ".[dev,atari,ray,mujoco,book]"
	{ echo "# Exact versions for the set-up (make setup). Regenerate with: make lock"; \
	  build/lock-venv/bin/python -m pip freeze --exclude-editable | sed 's/+cpu$$//'; } > constraints.txt
	rm -rf build/lock-venv

gpu-wheels: setup ## download the wheels the GPU machine's image lacks (CPython 3.12, manylinux x86-64) to build/gpu-wheels/
	rm -rf build/gpu-wheels
	$(BIN)/python benchmarks/gpu_wheels.py build/gpu-wheels --python-version 3.12

# GPU_PYTHON: the CPython 3.12 to check with (default: python3.12 on the PATH, else pyenv's)
gpu-wheels-check: setup ## prove build/gpu-wheels: resolved for cp312 with the image declared present, then the one-call dry run on CPython 3.12 with the image's torch 2.11.0
	$(BIN)/python benchmarks/gpu_wheels.py build/gpu-wheels-check --check --bundle build/gpu-wheels $(if $(GPU_PYTHON),--python $(GPU_PYTHON))

clean: ## remove the virtual environment and build output
	rm -rf $(VENV) build
