#!/usr/bin/env bash
# parse-vast-ratio.sh: ParseVast against plain encoding/json on the same 13 MB Vast search answer
# (issue 15's "Vast parse" row). It builds the scrapers test binary once, then runs the two
# benchmarks back to back GPUCOST_BENCH_COUNT times (default 5), so each run pairs them under the
# same load; it prints each run's MB/s, allocations and bytes, the medians, and the ratio of the
# medians ParseVast / plain (the goal is 1.0 or more).
#
#   bench/parse-vast-ratio.sh
#   GPUCOST_BENCH_COUNT=9 GPUCOST_BENCH_TIME=3s bench/parse-vast-ratio.sh
#
# GPUCOST_BENCH_TIME is each benchmark's -benchtime (default 1s). No ClickHouse is needed. The
# machine's load is printed before and after: on a shared machine, read the ratio with it.
set -euo pipefail

count=${GPUCOST_BENCH_COUNT:-5}
benchtime=${GPUCOST_BENCH_TIME:-1s}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go -C "$root" test -c -o "$tmp/scrapers.test" ./scrapers/
cd "$root/scrapers" # the benchmarks read testdata/
echo "load before: $(uptime)"
for i in $(seq "$count"); do
	"$tmp/scrapers.test" -test.run '^$' -test.bench '^BenchmarkParseVast(PlainJSON)?$' \
		-test.benchmem -test.benchtime "$benchtime" -test.count 1 >"$tmp/run"
	grep '^Benchmark' "$tmp/run" | sed "s/^/run $i: /"
	cat "$tmp/run" >>"$tmp/all"
done
echo "load after:  $(uptime)"

# Fields of a result line: name, iterations, then value-unit pairs.
awk '
function value(unit,   i) {
	for (i = 3; i < NF; i++) if ($(i + 1) == unit) return $i
	return ""
}
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
$1 ~ /^BenchmarkParseVast-[0-9]+$/          { p++; pm[p] = value("MB/s"); pa[p] = value("allocs/op"); pb[p] = value("B/op") }
$1 ~ /^BenchmarkParseVastPlainJSON-[0-9]+$/ { q++; qm[q] = value("MB/s"); qa[q] = value("allocs/op"); qb[q] = value("B/op") }
END {
	if (p == 0 || q == 0) { print "no benchmark results" > "/dev/stderr"; exit 1 }
	mp = median(pm, p); mq = median(qm, q)
	printf "median of %d runs   %10s %12s %14s\n", p, "MB/s", "allocs/op", "B/op"
	printf "ParseVast           %10.2f %12d %14d\n", mp, median(pa, p), median(pb, p)
	printf "plain encoding/json %10.2f %12d %14d\n", mq, median(qa, q), median(qb, q)
	printf "ratio ParseVast / plain (MB/s): %.2f (goal: 1.0 or more)\n", mp / mq
}' "$tmp/all"
