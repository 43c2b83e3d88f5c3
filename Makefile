# `make test` and `make train` work from a fresh clone: they create .venv and install into it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: install integrations-env lint test test-exhaustive check-extras docs figures train distill bench benchmark clean

$(PY):
	$(PYTHON) -m venv $(VENV)

# torch first, pinned: 2.13.0 is the CPU build on this machine's disk; an unpinned torch
# pulled in by stable-baselines3 would fetch a multi-GB CUDA build.
$(INSTALLED): pyproject.toml | $(PY)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install torch==2.13.0
	$(PY) -m pip install -e ".[train,dev,bench,benchmark,integrations,docs,jax,web]"
	touch $(INSTALLED)

install: $(INSTALLED)

# RLlib lives in its own venv: ray[rllib] pins gymnasium 1.2.x, the main venv has 1.4.
# The integration tests run the RLlib script through this venv's interpreter.
RLLIB_VENV := .venv-rllib
RLLIB_PY := $(RLLIB_VENV)/bin/python
RLLIB_INSTALLED := $(RLLIB_VENV)/.installed

# It shares .venv's torch (about 750 MB) instead of installing a second copy: torch's own
# directories are linked into a folder that a .pth file puts on the path, so pip sees torch as
# installed and adds only torch's small dependencies.
RLLIB_SHARED := $(RLLIB_VENV)/shared-torch

$(RLLIB_INSTALLED): pyproject.toml $(INSTALLED)
	$(PYTHON) -m venv $(RLLIB_VENV)
	$(RLLIB_PY) -m pip install --upgrade pip
	mkdir -p $(RLLIB_SHARED)
	site=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	for path in $$site/torch $$site/functorch $$site/torchgen $$site/torch-*.dist-info; do \
		ln -sfn "$$path" $(RLLIB_SHARED)/; \
	done
	echo "$(CURDIR)/$(RLLIB_SHARED)" > "$$($(RLLIB_PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/shared_torch.pth"
	$(RLLIB_PY) -m pip install -e ".[rllib]"
	touch $(RLLIB_INSTALLED)

integrations-env: $(RLLIB_INSTALLED)

# Lint (ruff) and type-check (mypy over draw_env/, agents/ and arena/); settings in pyproject.toml.
lint: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

test: $(INSTALLED) $(RLLIB_INSTALLED) lint
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(PY) -m pytest -n 2 -q --durations=15

# The exhaustive checks: equalities over the whole of mini's tree, a sweep of real training runs.
test-exhaustive: $(INSTALLED)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(PY) -m pytest -n 2 -q -m exhaustive

# Each extra resolved alone from the package index (pip's dry run) must give releases that work:
# where it picks another release series than .venv holds, every module of the extra must still
# import with those releases (tests/test_extras.py; 7 to 35 s an extra, about 3 minutes).
check-extras: $(INSTALLED)
	DRAW_CHECK_EXTRAS=1 $(PY) -m pytest -q tests/test_extras.py -k resolves

# The documentation site from docs/ (Sphinx, furo, MyST) into docs/_build/html, strict: any
# warning (a broken internal link or anchor, a docstring autodoc cannot read) fails the build.
docs: $(INSTALLED)
	rm -rf docs/_api docs/_build
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html

# The pictures drawn from data kept in the repository (docs/make_figures.py, seconds): the GIF of a
# hand, the 2-player ladder, the learning curves of the shipped policies' records, throughput
# against batch size. Charts that need a measurement come from their own commands (docs/results.md).
figures: $(INSTALLED)
	$(PY) docs/make_figures.py

# The project's best pipeline at a small budget: one iteration of expert iteration from a fresh
# network (configs/exit_quick.yaml); ends with "policy written to PATH". Its time and strength are
# in the README's Quick start section.
train: $(INSTALLED)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(VENV)/bin/draw-train --config configs/exit_quick.yaml

# A distillation: the plain compiled ismcts distilled into a fresh network, expert iteration's
# first iteration (configs/distill_2p.yaml; docs/training_exit.md).
distill: $(INSTALLED)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(VENV)/bin/draw-train --config configs/distill_2p.yaml

bench: $(INSTALLED)
	$(PY) benchmarks/throughput.py

# The reduced benchmark table (docs/benchmark.md): CFR+ on micro, self-play MaskablePPO on micro and
# 2-player Draw, three seeds each (configs/bench/reduced.yaml, its cost in its comments); resumable.
benchmark: $(INSTALLED)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(VENV)/bin/draw-bench --config configs/bench/reduced.yaml

clean:
	rm -rf $(VENV) $(RLLIB_VENV) .pytest_cache .hypothesis docs/_api docs/_build
