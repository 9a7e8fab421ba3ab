# gpucost developer tasks. `make demo` and `make test` are the two a new user runs first.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
# The local server's port (deploy/clickhouse/local.sh reads the same variable); the tests and
# the demo connect to it.
CH_PORT := $(or $(GPUCOST_CH_TCP_PORT),19000)
# The tests' server: the local one on a current engine (official or chdb, never Debian's 18.16),
# unless GPUCOST_TEST_CLICKHOUSE_DSN names another. $(call test_server,start|status)
TEST_ENGINE := $(or $(GPUCOST_CH_ENGINE),current)
ifneq ($(filter environment command line,$(origin GPUCOST_TEST_CLICKHOUSE_DSN)),)
export GPUCOST_TEST_CLICKHOUSE_DSN
test_server = echo "make: the tests use the server of GPUCOST_TEST_CLICKHOUSE_DSN"
else ifeq ($(filter auto current official chdb,$(TEST_ENGINE)),)
test_server = echo "make: the tests run on a current ClickHouse: GPUCOST_CH_ENGINE=$(TEST_ENGINE) is not one (make test-legacy runs them on 18.16)"; exit 2
else
export GPUCOST_TEST_CLICKHOUSE_DSN := clickhouse://default@127.0.0.1:$(CH_PORT)/gpucost?dial_timeout=5s
test_server = GPUCOST_CH_ENGINE=$(patsubst auto,current,$(TEST_ENGINE)) deploy/clickhouse/local.sh $(1)
endif
# The tests' Prometheus (measured GPU utilization): the local one of deploy/prometheus/local.sh,
# unless GPUCOST_TEST_PROMETHEUS_URL names another. The tests register their exporters in the
# folder of file_sd targets the server's configuration names (so a server another work tree
# started serves them too), or in GPUCOST_TEST_PROMETHEUS_TARGETS when set.
PROM_PORT := $(or $(GPUCOST_PROM_PORT),19090)
ifneq ($(filter environment command line,$(origin GPUCOST_TEST_PROMETHEUS_URL)),)
export GPUCOST_TEST_PROMETHEUS_URL
test_prometheus = echo "make: the tests use the Prometheus of GPUCOST_TEST_PROMETHEUS_URL"
else
export GPUCOST_TEST_PROMETHEUS_URL := http://127.0.0.1:$(PROM_PORT)
test_prometheus = deploy/prometheus/local.sh start
endif
# The legacy leg's server: Debian's ClickHouse 18.16, beside the current one on its own ports and
# data folder.
LEGACY_SERVER := GPUCOST_CH_ENGINE=debian GPUCOST_CH_TCP_PORT=19001 GPUCOST_CH_HTTP_PORT=18124 GPUCOST_LOCAL_DIR=$(CURDIR)/.data/clickhouse-legacy
LEGACY_DSN := clickhouse://default@127.0.0.1:19001/gpucost?dial_timeout=5s
# Test files built only for their own leg.
TEST_TAGS := cluster,measure
# The Go modules, each with its own go.mod: the product (gpucost and its packages, at the root)
# and deploy/ (the deployment checks and the chDB launcher's tests, with the libraries only they
# need). `./...` stops at a module's edge, so every target that runs ./... runs it in each.
MODULES := . deploy
# gotestsum, the runner of make test and test-legacy, is a tool of the deploy module (`tool` in
# deploy/go.mod), so the product's go.mod lists none of it: `go -C deploy tool -n` builds it once
# (into the build cache) and prints its path, and it runs in either module.
GOTESTSUM = "$$($(GO) -C $(CURDIR)/deploy tool -n gotestsum)"

.PHONY: bench-ratios bench-memory measure-growth cluster cluster-stop test-cluster test-legacy test-tools demo all build test bench fuzz clickhouse clickhouse-stop prometheus prometheus-stop migrate vet clean

all: build

## demo: a fresh demo database loaded from the shipped snapshot, the cheapest offer per GPU
## model, and the sample teams' plan
DEMO_DSN := clickhouse://default@127.0.0.1:$(CH_PORT)/gpucost_demo?dial_timeout=5s
demo: clickhouse build
	@curl -fsS "http://127.0.0.1:$${GPUCOST_CH_HTTP_PORT:-18123}/" --data-binary "DROP DATABASE IF EXISTS gpucost_demo" >/dev/null
	@GPUCOST_CLICKHOUSE_DSN='$(DEMO_DSN)' bin/gpucost migrate
	@GPUCOST_CLICKHOUSE_DSN='$(DEMO_DSN)' GPUCOST_SCRAPE_SPOOL_DIR=.data/demo-spool bin/gpucost scrape --replay scrapers/testdata/snapshot
	@echo; echo "TensorDock, not a default provider (its API answers only to a token; a replay sends nothing, so any token will do):"
	@GPUCOST_CLICKHOUSE_DSN='$(DEMO_DSN)' GPUCOST_SCRAPE_SPOOL_DIR=.data/demo-spool GPUCOST_TENSORDOCK_API_KEY=replay bin/gpucost scrape --replay scrapers/testdata/snapshot --providers tensordock
	@echo; echo "The market per GPU model (gpucost offers --group-by gpu):"
	@GPUCOST_CLICKHOUSE_DSN='$(DEMO_DSN)' bin/gpucost offers --group-by gpu --limit 0
	@echo; echo "The sample teams' plan (gpucost optimize, which plans the sample teams built in when no workloads file is named):"
	@GPUCOST_CLICKHOUSE_DSN='$(DEMO_DSN)' bin/gpucost optimize

## build: the gpucost binary in bin/
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/gpucost ./cmd/gpucost

## docker-binary: the static binary exactly as deploy/Dockerfile's build stage makes it (same
## command, same flags; the deploy tests check the two agree), in $(DOCKER_BINARY)
DOCKER_BINARY ?= bin/gpucost-static
.PHONY: docker-binary
docker-binary:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o $(DOCKER_BINARY) ./cmd/gpucost

## clickhouse: start the local ClickHouse on 127.0.0.1:$(CH_PORT): the official binary when installed,
## otherwise today's engine from chDB (fetched once), Debian's 18.16 only as a last resort
## (GPUCOST_CH_ENGINE picks one; see deploy/clickhouse/local.sh)
clickhouse:
	@deploy/clickhouse/local.sh start

## clickhouse-stop: stop it, and the 18.16 server of make test-legacy if that runs
clickhouse-stop:
	@deploy/clickhouse/local.sh stop
	@if $(LEGACY_SERVER) deploy/clickhouse/local.sh status 2>/dev/null; then $(LEGACY_SERVER) deploy/clickhouse/local.sh stop; fi

## prometheus: start the local Prometheus of the measured-utilization tests on
## 127.0.0.1:$(PROM_PORT) (Debian's prometheus; a 1 s scrape of the targets the tests register in
## its targets folder; see deploy/prometheus/local.sh)
prometheus:
	@deploy/prometheus/local.sh start

## prometheus-stop: stop it
prometheus-stop:
	@deploy/prometheus/local.sh stop

## migrate: create or upgrade the schema on $GPUCOST_CLICKHOUSE_DSN (default the local server)
migrate: clickhouse build
	bin/gpucost migrate --dsn "$${GPUCOST_CLICKHOUSE_DSN:-clickhouse://default@127.0.0.1:$(CH_PORT)/gpucost}"

vet:
	$(GO) vet -tags $(TEST_TAGS) ./...
	$(GO) -C deploy vet -tags $(TEST_TAGS) ./...

## test-tools: what the tests need besides Go and ClickHouse, installed when missing (apt-get, as
## root on Debian; otherwise the command to run is printed)
test-tools:
	@deploy/need.sh "make test" promtool=prometheus prometheus=prometheus chromium=chromium systemd-analyze=systemd \
	  /usr/share/fonts/truetype/liberation=fonts-liberation gcc=gcc g++=g++ curl=curl

## test: vet, then every test of both modules with the race detector, ClickHouse integration
## tests included, on a current ClickHouse (the local one of make clickhouse, never 18.16), and
## the measured-utilization tests on the local Prometheus (make prometheus); says which server it
## used
test: test-tools vet
	@$(call test_server,start)
	@$(test_prometheus)
	GPUCOST_INTEGRATION=1 $(GOTESTSUM) --format pkgname --format-hide-empty-pkg -- -race -count=1 ./...
	cd deploy && GPUCOST_INTEGRATION=1 $(GOTESTSUM) --format pkgname --format-hide-empty-pkg -- -race -count=1 ./...
	@$(call test_server,status)

## test-legacy: the ClickHouse tests once more on Debian's ClickHouse 18.16 (its own server on
## 127.0.0.1:19001), so the SQL gpucost ships is proven on both: the tests of every package (of
## either module) that uses store/storetest, but the chDB launcher's (deploy/clickhouse), which
## never meet 18.16
test-legacy: test-tools
	@$(LEGACY_SERVER) deploy/clickhouse/local.sh start
	@$(test_prometheus)
	@set -o pipefail; for m in $(MODULES); do \
	  pkgs=$$($(GO) -C $$m list -f '{{.ImportPath}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}' ./... | \
	     awk '/ github.com\/gpucost\/gpucost\/store\/storetest( |$$)/ && $$1 !~ /deploy\/clickhouse$$/ {print $$1}') || exit 1; \
	  [ -n "$$pkgs" ] || continue; \
	  echo "cd $$m && gotestsum --format pkgname -- -count=1" $$pkgs; \
	  (cd $$m && GPUCOST_INTEGRATION=1 GPUCOST_TEST_CLICKHOUSE_DSN='$(LEGACY_DSN)' $(GOTESTSUM) --format pkgname -- -count=1 $$pkgs) || exit 1; \
	done
	@$(LEGACY_SERVER) deploy/clickhouse/local.sh status

## cluster: a local ClickHouse cluster (2 shards × 2 replicas, ZooKeeper) on loopback ports
cluster:
	@deploy/clickhouse-cluster/local.sh start

cluster-stop:
	@deploy/clickhouse-cluster/local.sh stop

## test-cluster: gpucost on the local cluster (ClickHouse 18.16): migrate --cluster, scrapes,
## replicas stopped during a run, and the same results as on one server of the same version.
## One package at a time (-p 1): cmd/gpucost's test stops replicas of the cluster both share.
test-cluster: cluster
	@$(LEGACY_SERVER) deploy/clickhouse/local.sh start
	GPUCOST_INTEGRATION=1 GPUCOST_TEST_CLICKHOUSE_DSN='$(LEGACY_DSN)' $(GO) test -p 1 -tags cluster -count=1 -run Cluster ./cmd/gpucost/ ./store/

## test-faults: the tests that kill a ClickHouse server of their own during loads
## (cmd/gpucost/faults_test.go), on a current engine (127.0.0.1:19400, 40 kills) and on Debian's
## 18.16 (127.0.0.1:19410, 15 kills); each server is started, killed and started again by the
## test, and stopped afterwards. The shared servers are never touched.
FAULTS_CURRENT := GPUCOST_CH_ENGINE=$(patsubst auto,current,$(TEST_ENGINE)) GPUCOST_CH_TCP_PORT=19400 GPUCOST_CH_HTTP_PORT=18400 GPUCOST_LOCAL_DIR=$(CURDIR)/.data/clickhouse-faults GPUCOST_FAULTS_KILLS=40
FAULTS_LEGACY := GPUCOST_CH_ENGINE=debian GPUCOST_CH_TCP_PORT=19410 GPUCOST_CH_HTTP_PORT=18410 GPUCOST_LOCAL_DIR=$(CURDIR)/.data/clickhouse-faults-legacy GPUCOST_FAULTS_KILLS=15
.PHONY: test-faults
test-faults: test-tools
	@set -o pipefail; status=0; for server in "$(FAULTS_CURRENT)" "$(FAULTS_LEGACY)"; do \
	  env $$server GPUCOST_INTEGRATION=1 GPUCOST_FAULTS=1 $(GO) test -count=1 -run '^TestKillClickHouseDuringLoads$$' -v ./cmd/gpucost/ | grep -v '^=== RUN' || status=1; \
	  env $$server deploy/clickhouse/local.sh stop; \
	done; exit $$status

## measure-growth: a week of hourly scrapes into a fresh database; rows and bytes per table
## (the growth table of docs/operations.md)
measure-growth: clickhouse
	GPUCOST_INTEGRATION=1 $(GO) test -tags measure -count=1 -timeout 30m -run MeasureGrowth -v ./cmd/gpucost/ | grep '^|\|runs of'

## bench: the Go benchmarks of both modules (inserts need the local ClickHouse)
bench: clickhouse
	@deploy/need.sh "make bench" clickhouse-client=clickhouse-client
	GPUCOST_INTEGRATION=1 $(GO) test -timeout 60m -run '^$$' -bench . -benchmem -count=1 ./...
	GPUCOST_INTEGRATION=1 $(GO) -C deploy test -timeout 60m -run '^$$' -bench . -benchmem -count=1 ./...

## bench-ratios: the paired comparisons with their limits, several runs each, medians printed:
## ParseVast against plain encoding/json on the same 13 MB answer (bench/parse-vast-ratio.sh;
## GPUCOST_BENCH_COUNT runs, default 5), and ingest end to end against clickhouse-client
## inserting the same rows (bench/ingest-ratio.sh; GPUCOST_BENCH_RUNS runs, default 3)
bench-ratios: clickhouse
	@deploy/need.sh "make bench-ratios" clickhouse-client=clickhouse-client
	bench/parse-vast-ratio.sh
	bench/ingest-ratio.sh

## bench-memory: peak RSS of gpucost scrape against fake providers that answer every request with
## a hostile body at the body limit (GPUCOST_BENCH_BODY_BYTES to try another limit,
## GPUCOST_BENCH_RUNS runs per scenario); fails when a dry run passes 300 MB. No ClickHouse needed.
bench-memory:
	$(GO) test -tags measure -count=1 -timeout 20m -run MeasureScrapeMemory -v ./cmd/gpucost/ | grep -v '^=== RUN'

## fuzz: each parser's fuzz target briefly, in both modules (FUZZTIME=10m for a longer hunt). Go's
## fuzzing engine can end a short run with "context deadline exceeded" and no failing input (its
## workers still busy at the deadline): such a run is tried once more; a failure that wrote a
## failing input (testdata/fuzz/…) fails at once.
FUZZTIME ?= 10s
fuzz:
	@log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for m in $(MODULES); do \
	  for pkg in $$($(GO) -C $$m list ./...); do \
	    for target in $$($(GO) -C $$m test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	      echo "fuzz $$pkg $$target"; \
	      fuzz() { $(GO) -C $$m test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 0 $$pkg 2>&1 | tee $$log; }; \
	      set -o pipefail; fuzz && continue; \
	      if grep -q 'context deadline exceeded' $$log && ! grep -q 'Failing input written' $$log; then \
	        echo "fuzz $$pkg $$target: the engine's deadline, no failing input: once more"; fuzz && continue; \
	      fi; \
	      exit 1; \
	    done; \
	  done; \
	done

clean:
	rm -rf bin
