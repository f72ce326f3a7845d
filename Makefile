# netheat: one entry point for building, testing, benchmarking and the demo.
# `make help` lists the targets. Every target installs what it needs itself.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.deps-stamp
VENV_ENV := VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH
PY_DEPS := maturin numpy pyarrow matplotlib polars pytest hypothesis ruff mypy ray \
	fastapi uvicorn httptools uvloop prometheus-client httpx
VEGETA := $(VENV)/bin/vegeta
RUST_TEST_EXCLUDES := --exclude netheat-py --exclude netheat-bench

.DEFAULT_GOAL := help
.PHONY: help venv build test test-rust test-python test-java lint fmt bench bench-simgrid bench-baraat-two-stage bench-utp bench-serve validate validate-ns3 demo demo-live clean chromium prometheus fuzz bench-hdfs bench-hdfs-calibrate bench-hdfs-predict

help: ## Show this help
	@echo "Usage: make TARGET"
	@grep -E '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-23s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml Makefile
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check $(PY_DEPS)
	@touch $@

venv: $(STAMP) ## Create .venv with the Python tools netheat needs

build: venv ## Build the Rust extension (release) into .venv
	flock /tmp/netheat-maturin.lock env $(VENV_ENV) maturin develop --release --quiet

test-rust: ## Run the Rust tests (unit, integration, property)
	cargo test --workspace $(RUST_TEST_EXCLUDES)

fuzz: build ## Fuzz every reader for longer (flow CSV, workload and datacenter TOML: 20,000 cases; telemetry: 5,000)
	PROPTEST_CASES=$${PROPTEST_CASES:-20000} cargo test --release -p netheat-workloads -p netheat-config --test fuzz
	NETHEAT_FUZZ=1 $(PY) -m pytest -q tests/python/test_fuzz_telemetry.py

chromium: ## Install headless Chromium (the report-rendering test needs it)
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

prometheus: ## Install Prometheus (the ingest end-to-end test needs it)
	command -v prometheus >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus)

test-python: build chromium prometheus ## Run the Python tests
	$(PY) -m pytest -q

test-java: ## Run the HDFS placement policy's tests (Maven)
	mvn -q -B -f java/hdfs-placement/pom.xml test

test: test-rust test-python test-java ## Create .venv, build, run every test

# stubtest imports the built extension and checks _netheat.pyi against it (names,
# parameters, defaults, @final); hence `build`. No allowlist: nothing needs one.
lint: build ## cargo fmt/clippy -D warnings, ruff, mypy, stubtest of _netheat.pyi
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests benches validation
	$(VENV)/bin/ruff format --check python tests benches validation
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest netheat._netheat

fmt: venv ## Format Rust and Python sources
	cargo fmt --all
	$(VENV)/bin/ruff format python tests benches validation
	$(VENV)/bin/ruff check --fix python tests benches validation

bench: build ## Run the benchmarks and print their tables
	cargo run --release -q -p netheat-bench --bin netheat-bench
	cargo run --release -q -p netheat-engine --example engine_bench -- a b c=10000,100000,1000000
	cargo run --release -q -p netheat-scenario --example scenario_bench
	cargo run --release -q -p netheat-workloads --example gen_bench
	cargo run --release -q -p netheat-repro --example baraat_bench
	cargo run --release -q -p netheat-repro --example scenario_overhead
	$(PY) benches/cli_bench.py
	$(PY) benches/analytics_bench.py
	$(PY) benches/subways_bench.py
	cargo run --release -q -p netheat-scenario --example cluster_bench -- small
	$(PY) benches/storage_bench.py
	$(PY) benches/memory_bench.py
	cargo run --release -q -p netheat-repro --example packet_bench
	cargo run --release -q -p netheat-fec --example lt_overhead
	$(MAKE) --no-print-directory bench-serve

# vegeta (HTTP load generator) from the Go module proxy, into .venv/bin.
$(VEGETA):
	@command -v go >/dev/null || (echo "bench-serve needs Go to install vegeta (golang-go)"; exit 1)
	GOBIN=$(abspath $(VENV))/bin go install github.com/tsenart/vegeta/v12@v12.13.0

bench-serve: build $(VEGETA) ## netheat serve under load: 10,000 hosts, vegeta at 500 requests/s for 20 s per endpoint, with 1 and 2 worker processes
	$(PY) benches/serve/bench_serve.py --vegeta $(VEGETA)

bench-simgrid: build ## Engine vs SimGrid 3.32 on the engine issue's scenarios (installs python3-simgrid; minutes)
	$(PY) benches/engine_vs_simgrid.py a b

bench-baraat-two-stage: build ## Baraat two-level partition-aggregate (section 5.2.2): 10,000 uniform tasks of 30 mid-levels x 40 rack-local flows on 36,000 hosts, fair share vs FIFO-LM (long: about 10 min per 4,800 tasks)
	BARAAT_APP=two-stage BARAAT_MIDS=30 cargo run --release -q -p netheat-repro --example baraat_bench -- 10000 uniform fair-share,fifo-lm

bench-utp: ## UTP at full scale (experiments/scenarios/utp-cluster.toml): 10,000 servers, 24 simulated hours, UTP policy (long)
	cargo run --release -q -p netheat-scenario --example cluster_bench -- 10k utp

bench-hdfs: ## Sinbad/CCP/default in a real HDFS cluster on network namespaces (root; minutes)
	@command -v ip >/dev/null && command -v tc >/dev/null || (apt-get update && apt-get install -y iproute2)
	mvn -q -B -f java/hdfs-placement/pom.xml package -DskipTests
	python3 benches/hdfs/run.py

bench-hdfs-calibrate: ## bench-hdfs's calibration runs for its prediction (root; ~20 min): default mode, no background, then a fixed hot set
	@command -v ip >/dev/null && command -v tc >/dev/null || (apt-get update && apt-get install -y iproute2)
	mvn -q -B -f java/hdfs-placement/pom.xml package -DskipTests
	for c in idle hot; do python3 benches/hdfs/run.py $$(python3 benches/hdfs/predict.py --calibration-argv $$c) --out bench-out/hdfs-cal-$$c || exit 1; done

bench-hdfs-predict: ## netheat's simulation of bench-hdfs's cluster and workload against its measured speedup (no root; ~3 min with the build)
	cargo build --release -q -p netheat-repro --example hdfs_predict
	python3 benches/hdfs/predict.py

validate: build ## Cross-check engine completion times against SimGrid on random scenarios
	$(PY) validation/crosscheck_simgrid.py --scenarios 20

validate-ns3: ## Cross-check the packet engine against ns-3 (installs libns3-dev): completion times and speed
	python3 validation/crosscheck_ns3.py

demo: build ## Hotspot demo (demo-out/report.html) and every bundled experiment, quick (demo-out/reproduce/report.html)
	$(VENV)/bin/netheat demo --out demo-out
	$(VENV)/bin/netheat reproduce --quick --out demo-out/reproduce

demo-live: build prometheus ## One minute on 127.0.0.1: a hotspot appears in a real Prometheus and netheat serve steers around it
	$(VENV)/bin/netheat demo --live

clean: ## Remove build outputs and .venv
	cargo clean
	rm -rf $(VENV) demo-out bench-out
