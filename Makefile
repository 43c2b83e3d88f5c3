# `make test` and `make train` work from a fresh clone: they create .venv and install into it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: install test train bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)

# torch first, pinned: 2.13.0 is the CPU build on this machine's disk; an unpinned torch
# pulled in by stable-baselines3 would fetch a multi-GB CUDA build.
$(INSTALLED): pyproject.toml | $(PY)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install torch==2.13.0
	$(PY) -m pip install -e ".[train,dev,bench]"
	touch $(INSTALLED)

install: $(INSTALLED)

test: $(INSTALLED)
	$(PY) -m pytest -n 2 -q

train: $(INSTALLED)
	$(VENV)/bin/draw-train --config configs/selfplay_2p.yaml

bench: $(INSTALLED)
	$(PY) benchmarks/throughput.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
