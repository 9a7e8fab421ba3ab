#!/usr/bin/env bash
# local.sh: a Prometheus server for the tests of measured GPU utilization, with no manual step.
#
#   deploy/prometheus/local.sh start   start it (Debian's prometheus; installed when missing), wait until it is ready
#   deploy/prometheus/local.sh stop    stop it
#   deploy/prometheus/local.sh status  say whether it runs
#
# It scrapes every second the targets listed in the JSON files of its targets folder (file-based
# service discovery, picked up within a second or two of a file appearing), so a test registers
# an exporter of its own by writing a file there and removes it when it ends (package
# gpuusage/gpuusagetest does both). A target's labels in the file (a unique job, say) keep one
# test's series apart from another's.
#
# It listens on 127.0.0.1 only, on a non-default port (so it never clashes with a system
# Prometheus), and keeps its data (one day of it), log and configuration under $GPUCOST_PROM_DIR
# (default .data/prometheus in the work tree, git-ignored). Starting it again while it answers
# does nothing.
# Environment: GPUCOST_PROM_PORT (default 19090), GPUCOST_PROM_DIR.
# `make test` starts it and hands the tests its URL (GPUCOST_TEST_PROMETHEUS_URL); they find
# the targets folder in its configuration.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${GPUCOST_PROM_DIR:-$root/.data/prometheus}
port=${GPUCOST_PROM_PORT:-19090}
pidfile=$dir/prometheus.pid
targets=$dir/targets

say() { printf 'prometheus: %s\n' "$*" >&2; }
# running and stop.
source "$root/deploy/background.sh"

ready() { curl -fsS --max-time 1 "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1; }

# describe says which server answers: its version, and the targets folder it reads (the one of
# the server that runs, which another work tree may have started).
describe() {
  local v files
  v=$(curl -fsS --max-time 2 "http://127.0.0.1:$port/api/v1/status/buildinfo" 2>/dev/null | sed -n 's/.*"version":"\([^"]*\)".*/\1/p')
  files=$(curl -fsS --max-time 2 "http://127.0.0.1:$port/api/v1/status/config" 2>/dev/null | grep -o -- '- [^"\\]*\.json' | head -n 1 | cut -c3-)
  echo "Prometheus ${v:-(version unknown)} on 127.0.0.1:$port, targets ${files:-(none)}"
}

write_config() {
  mkdir -p "$dir/data" "$targets"
  cat > "$dir/prometheus.yml" <<YAML
# Written by deploy/prometheus/local.sh; rewritten at every start.
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gpucost-test
    file_sd_configs:
      - files: ["$targets/*.json"]
        refresh_interval: 5s
YAML
}

start() {
  if ready; then
    say "already running: $(describe)"
    return
  fi
  "$root/deploy/need.sh" "prometheus" prometheus=prometheus
  write_config
  say "starting $(command -v prometheus) on 127.0.0.1:$port, data in $dir"
  # setsid detaches it from make's process group so it outlives the make invocation.
  setsid prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
    --storage.tsdb.retention.time=1d --web.listen-address="127.0.0.1:$port" --log.level=warn \
    >>"$dir/prometheus.log" 2>&1 < /dev/null &
  echo $! > "$pidfile"
  for _ in $(seq 1 120); do
    if ready; then
      say "ready: $(describe)"
      return
    fi
    if ! running; then
      say "the server exited while starting; last log lines:"
      tail -n 20 "$dir/prometheus.log" >&2 || true
      exit 1
    fi
    sleep 0.25
  done
  say "the server was not ready within 30 s; see $dir/prometheus.log"
  exit 1
}


case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) if ready; then say "running: $(describe)"; else say "not running"; exit 1; fi ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
