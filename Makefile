# Two commands for a fresh clone:  `make run`  and  `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test test-browser extension lint bench bench-mcp bench-listing bench-quality bench-transfer bench-gui bench-native-host screenshots package smoke clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The tray app on a desktop; without a display, the HTTP server.
run: $(STAMP)
	$(BIN)/tallei-desktop $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check tallei_desktop tests bench
	$(BIN)/ruff format --check tallei_desktop tests bench docs
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -q $(PYTEST_ARGS)

# The browser extension in a real Chromium (Debian: apt-get install -y chromium); also part of `make test`.
test-browser: $(STAMP)
	$(BIN)/pytest -q -m browser tests/browser $(PYTEST_ARGS)

# The extension's Chrome and Firefox packages (and unpacked copies) in dist/.
extension:
	$(PYTHON) browser/build.py --out dist

bench: $(STAMP)
	$(BIN)/python bench/bench_engine.py $(BENCH_ARGS)

bench-mcp: $(STAMP)
	$(BIN)/python bench/bench_mcp.py $(BENCH_ARGS)

bench-gui: $(STAMP)
	$(BIN)/python bench/bench_gui.py $(BENCH_ARGS)

bench-native-host: $(STAMP)
	$(BIN)/python bench/bench_native_host.py $(BENCH_ARGS)

# Needs Xvfb, trayer and ImageMagick (Debian: apt-get install -y xvfb trayer imagemagick).
screenshots: $(STAMP)
	$(BIN)/python docs/make_screenshots.py

bench-listing: $(STAMP)
	$(BIN)/python bench/bench_listing.py $(BENCH_ARGS)

bench-quality: $(STAMP)
	$(BIN)/python bench/bench_quality.py $(BENCH_ARGS)

bench-transfer: $(STAMP)
	$(BIN)/python bench/bench_transfer.py $(BENCH_ARGS)

# The installable one-folder app in dist/tallei-desktop; MODEL_DIR=<folder> bundles a local model.
BUILD_STAMP := $(VENV)/.build-installed
$(BUILD_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev,build]'
	touch $(BUILD_STAMP)

package: $(BUILD_STAMP)
	nice -n 5 $(BIN)/python packaging/build.py $(if $(MODEL_DIR),--model-dir '$(MODEL_DIR)')

# Checks the built app as a person would run it (builds it first when dist/ has none).
smoke: $(BUILD_STAMP)
	packaging/smoke.sh

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache build dist
