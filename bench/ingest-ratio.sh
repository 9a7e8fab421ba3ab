#!/usr/bin/env bash
# ingest-ratio.sh: gpucost's ingest end to end against the raw insert limit, paired run by run.
#
#   bench/ingest-ratio.sh            (make bench-ratios runs it, with the local ClickHouse)
#
# Each run of BenchmarkIngestMarket (cmd/gpucost/bench_ingest_test.go) scrapes a generated
# Vast.ai market of 100k and of 1M offers with `gpucost scrape`, then inserts the very rows it
# stored (offers and raw payload bodies, as TSV) with clickhouse-client into a fresh database of
# the same schema on the same server. This prints each run's offers/s, the client's rows/s,
# their ratio and gpucost's peak RSS, then the median ratio per market size (goal: ≥ 0.5).
# GPUCOST_BENCH_RUNS sets the runs (default 3); the load average is printed before and after,
# since the machine's other work moves every figure.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${GPUCOST_BENCH_RUNS:-3}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
GPUCOST_INTEGRATION=1 go test -run '^$' -bench '^BenchmarkIngestMarket$' -benchtime 1x -count "$runs" -timeout 120m ./cmd/gpucost/ |
  awk -f bench/ratio.awk -v metric='×client' -v show='offers/s client-rows/s ×client peak-RSS-MB'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
