# gpucost developer tasks. `make demo` and `make test` are the two a new user runs first.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
CHDB_PKG := @chdb/lib-linux-x64-gnu@26.7.3-stable.1
CHDB_DIR := .data/chdb
# The local server's port (deploy/clickhouse/local.sh reads the same variable); the tests and
# the demo connect to it.
CH_PORT := $(or $(GPUCOST_CH_TCP_PORT),19000)
export GPUCOST_TEST_CLICKHOUSE_DSN ?= clickhouse://default@127.0.0.1:$(CH_PORT)/gpucost?dial_timeout=5s

.PHONY: measure-growth cluster cluster-stop test-cluster demo all build test test-modern bench fuzz clickhouse clickhouse-stop migrate vet clean

all: build

## demo: a fresh demo database loaded from the shipped snapshot, the cheapest offer per GPU
## model, and the sample teams' plan
DEMO_DSN := clickhouse://default@127.0.0.1:$(CH_PORT)/gpucost_demo?dial_timeout=5s
demo: clickhouse build
	@curl -fsS "http://127.0.0.1:$${GPUCOST_CH_HTTP_PORT:-18123}/" --data-binary "DROP DATABASE IF EXISTS gpucost_demo" >/dev/null
	@GPUCOST_CLICKHOUSE_DSN='$(DEMO_DSN)' bin/gpucost migrate
	@GPUCOST_CLICKHOUSE_DSN='$(DEMO_DSN)' GPUCOST_SCRAPE_SPOOL_DIR=.data/demo-spool bin/gpucost scrape --replay scrapers/testdata/snapshot
	@echo; echo "Cheapest offer per GPU model (gpucost offers --cheapest-per-gpu):"
	@GPUCOST_CLICKHOUSE_DSN='$(DEMO_DSN)' bin/gpucost offers --cheapest-per-gpu --limit 0
	@echo; echo "The sample teams' plan (gpucost optimize --workloads deploy/workloads.sample.yaml):"
	@GPUCOST_CLICKHOUSE_DSN='$(DEMO_DSN)' bin/gpucost optimize --workloads deploy/workloads.sample.yaml

## build: the gpucost binary in bin/
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/gpucost ./cmd/gpucost

## docker-binary: the static binary exactly as deploy/Dockerfile's build stage makes it (same
## command, same flags; the deploy tests check the two agree), in $(DOCKER_BINARY)
DOCKER_BINARY ?= bin/gpucost-static
.PHONY: docker-binary
docker-binary:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o $(DOCKER_BINARY) ./cmd/gpucost

## clickhouse: start the local ClickHouse (installed when missing) on 127.0.0.1:$(CH_PORT)
clickhouse:
	@deploy/clickhouse/local.sh start

## clickhouse-stop: stop it
clickhouse-stop:
	@deploy/clickhouse/local.sh stop

## migrate: create or upgrade the schema on $GPUCOST_CLICKHOUSE_DSN (default the local server)
migrate: clickhouse build
	bin/gpucost migrate --dsn "$${GPUCOST_CLICKHOUSE_DSN:-clickhouse://default@127.0.0.1:$(CH_PORT)/gpucost}"

vet:
	$(GO) vet ./...

## test: vet, then every test with the race detector, ClickHouse integration tests included
test: clickhouse vet
	GPUCOST_INTEGRATION=1 $(GO) test -race -count=1 ./...

## test-modern: the migrations and store queries on a current ClickHouse engine (chDB)
test-modern: $(CHDB_DIR)/package/libchdb.so
	CHDB_LIB_PATH=$(CURDIR)/$(CHDB_DIR)/package/libchdb.so $(GO) test -tags modern -count=1 -run Modern ./store/

$(CHDB_DIR)/package/libchdb.so:
	@echo "fetching $(CHDB_PKG) from the npm registry (once, ~570 MB unpacked)"
	mkdir -p $(CHDB_DIR)
	cd $(CHDB_DIR) && npm pack --silent $(CHDB_PKG) >/dev/null && tar xzf chdb-lib-linux-x64-gnu-*.tgz && rm -f chdb-lib-linux-x64-gnu-*.tgz

## cluster: a local ClickHouse cluster (2 shards × 2 replicas, ZooKeeper) on loopback ports
cluster:
	@deploy/clickhouse-cluster/local.sh start

cluster-stop:
	@deploy/clickhouse-cluster/local.sh stop

## test-cluster: gpucost on the local cluster: migrate --cluster, scrapes, replicas stopped
## during a run, and the same results as on one server
test-cluster: clickhouse cluster
	GPUCOST_INTEGRATION=1 GPUCOST_TEST_CLUSTER=1 $(GO) test -count=1 -run Cluster ./cmd/gpucost/ ./store/

## measure-growth: a week of hourly scrapes into a fresh database; rows and bytes per table
## (the growth table of docs/operations.md)
measure-growth: clickhouse
	GPUCOST_INTEGRATION=1 GPUCOST_MEASURE_GROWTH=1 $(GO) test -count=1 -timeout 30m -run MeasureGrowth -v ./cmd/gpucost/ | grep '^|\|runs of'

## bench: the Go benchmarks (inserts need the local ClickHouse)
bench: clickhouse
	GPUCOST_INTEGRATION=1 $(GO) test -timeout 60m -run '^$$' -bench . -benchmem -count=1 ./...

## fuzz: each parser's fuzz target briefly (FUZZTIME=10m for a longer hunt)
FUZZTIME ?= 10s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$target"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 0 $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -rf bin
