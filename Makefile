# Two entry points (see README): `make demo` indexes the Python standard library of this machine
# and searches it; `make test` runs the test suite. Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_HOME ?= $(CURDIR)/.hermes-demo
STDLIB := $(shell $(PYTHON) -c "import sysconfig; print(sysconfig.get_paths()['stdlib'])")

.PHONY: install install-dev install-semantic demo demo-hybrid test clean-demo

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[workspace,documents,mcp]'

# torch first and pinned: the CPU build; anything else would pull a CUDA build of several GB.
install-dev: $(BIN)/python
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[workspace,semantic,documents,mcp,dev]'

install-semantic: $(BIN)/python
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[workspace,semantic,mcp]'

# The standard library's top-level modules plus its larger packages (recursive); the whole tree
# would also take in site-packages.
STDLIB_PACKAGES := asyncio concurrent email html http importlib json logging multiprocessing sqlite3 unittest urllib xml

demo: install
	HERMES_HOME=$(DEMO_HOME) $(BIN)/hermes-workspace roots add $(STDLIB)
	for pkg in $(STDLIB_PACKAGES); do HERMES_HOME=$(DEMO_HOME) $(BIN)/hermes-workspace roots add $(STDLIB)/$$pkg --recursive > /dev/null; done
	HERMES_HOME=$(DEMO_HOME) $(BIN)/hermes-workspace index
	HERMES_HOME=$(DEMO_HOME) $(BIN)/hermes-workspace --human search json decoder --limit 3
	HERMES_HOME=$(DEMO_HOME) $(BIN)/hermes-workspace search read_file --limit 2
	HERMES_HOME=$(DEMO_HOME) $(BIN)/hermes-workspace --human retrieve where does the json decoder raise JSONDecodeError --budget 600

# Hybrid search on three standard-library packages (about 80 chunks) with the bundled local model
# run by onnxruntime: the first index exports the model to ONNX once (seconds), then embeds the
# chunks (20-40 s on 2 cores: long code chunks are embedded in several 256-token windows).
DEMO_HYBRID_HOME ?= $(CURDIR)/.hermes-demo-hybrid
HYBRID_PACKAGES := json urllib concurrent

demo-hybrid: install-semantic
	mkdir -p $(DEMO_HYBRID_HOME)
	test -f $(DEMO_HYBRID_HOME)/config.yaml || printf 'knowledgebase:\n  embedder:\n    provider: onnx\n' > $(DEMO_HYBRID_HOME)/config.yaml
	for pkg in $(HYBRID_PACKAGES); do HERMES_HOME=$(DEMO_HYBRID_HOME) $(BIN)/hermes-workspace roots add $(STDLIB)/$$pkg --recursive > /dev/null; done
	HERMES_HOME=$(DEMO_HYBRID_HOME) $(BIN)/hermes-workspace index
	HERMES_HOME=$(DEMO_HYBRID_HOME) $(BIN)/hermes-workspace --human search turn a python object into a json string --limit 3
	HERMES_HOME=$(DEMO_HYBRID_HOME) $(BIN)/hermes-workspace --human search wait until the first of several background jobs is done --limit 3

# The example plugin (examples/, README "Writing a plugin") is installed and its own tests run
# too: they subclass the shipped contract suite and index with the installed plugin.
EXAMPLE_PLUGIN := examples/hermes-workspace-example-chunker

test: install-dev
	$(BIN)/python -m pip install --quiet -e $(EXAMPLE_PLUGIN)
	$(BIN)/python -m pytest
	cd $(EXAMPLE_PLUGIN) && $(abspath $(BIN))/python -m pytest -q -p no:cacheprovider

clean-demo:
	rm -rf $(DEMO_HOME) $(DEMO_HYBRID_HOME)

# Benchmarks (benchmarks/README.md): results/*.json, REPORT.md and plots under benchmarks/results/.
# `bench` is the full run (well under an hour on 2 cores); `bench-quick` takes a few minutes.
# ripgrep comparisons need `rg` (apt-get install -y ripgrep); without it they are skipped.
.PHONY: install-bench bench bench-quick

install-bench: $(BIN)/python
	@$(BIN)/python -c "import bm25s, Stemmer, ir_measures, matplotlib, psutil, chonkie, onnxruntime, sqlite_vec, hermes_workspace" 2>/dev/null \
		|| ($(BIN)/python -m pip install --quiet torch==2.13.0 && $(BIN)/python -m pip install --quiet -e '.[workspace,semantic,documents,bench]')

bench: install-bench
	$(BIN)/python -m benchmarks --full

bench-quick: install-bench
	$(BIN)/python -m benchmarks --quick
