#!/usr/bin/env bash
# local.sh: a ClickHouse server for development, tests and the demo, with no manual step.
#
#   deploy/clickhouse/local.sh start   install if missing (Debian, as root), start, wait until it answers
#   deploy/clickhouse/local.sh stop    stop it
#   deploy/clickhouse/local.sh status  say whether it runs
#
# The server listens on 127.0.0.1 only, on non-default ports (so it never clashes with a system
# ClickHouse), and keeps its data and logs under $GPUCOST_LOCAL_DIR (default: .data/clickhouse in
# the work tree, git-ignored). It uses whichever server is installed, preferring the official single
# binary (`clickhouse server`, current versions) over Debian's `clickhouse-server` (18.16).
# Environment: GPUCOST_CH_TCP_PORT (default 19000), GPUCOST_CH_HTTP_PORT (default 18123),
# GPUCOST_LOCAL_DIR, GPUCOST_CH_EXTRA_XML: a file of server settings inserted into the
# generated config, and GPUCOST_CH_PROFILE_XML: a file of query settings inserted into the
# default user's profile (the local cluster of deploy/clickhouse-cluster/local.sh uses them for
# remote_servers, zookeeper, macros, the interserver port and load_balancing).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${GPUCOST_LOCAL_DIR:-$root/.data/clickhouse}
tcp_port=${GPUCOST_CH_TCP_PORT:-19000}
http_port=${GPUCOST_CH_HTTP_PORT:-18123}
pidfile=$dir/clickhouse.pid

say() { printf 'clickhouse: %s\n' "$*" >&2; }

# server_cmd prints the command that runs a server in the foreground, preferring the newer binary.
server_cmd() {
  if command -v clickhouse >/dev/null 2>&1 && clickhouse server --help >/dev/null 2>&1; then
    echo "clickhouse server"
  elif command -v clickhouse-server >/dev/null 2>&1; then
    command -v clickhouse-server
  elif [ -x /usr/sbin/clickhouse-server ]; then
    echo /usr/sbin/clickhouse-server
  fi
}

install_server() {
  if [ -r /etc/debian_version ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing Debian's clickhouse-server (apt-get) ..."
    # The package's postinst wants to start a service; there is no init system in CI, so ignore that.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q clickhouse-server >/dev/null 2>&1 || {
      apt-get update -q >/dev/null 2>&1
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q clickhouse-server >/dev/null
    }
    return
  fi
  say "no ClickHouse server found. Install one, then run this again:"
  say "  Debian/Ubuntu: sudo apt-get install clickhouse-server"
  say "  elsewhere:     curl https://clickhouse.com/ | sh   (or: brew install clickhouse)"
  say "  or use Docker:  docker compose up -d clickhouse   (then set GPUCOST_CLICKHOUSE_DSN)"
  exit 1
}

answers() {
  # The HTTP interface answers "Ok." on / once the server accepts queries.
  curl -fsS --max-time 1 "http://127.0.0.1:$http_port/" 2>/dev/null | grep -q Ok
}

running() {
  [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

# write_config writes config.xml and users.xml for the detected server. 18.16 wants the
# <yandex> root element; current servers want <clickhouse> (and still accept <yandex>).
write_config() {
  local rootel=$1
  mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/format_schemas" "$dir/log"
  cat > "$dir/config.xml" <<XML
<?xml version="1.0"?>
<$rootel>
  <logger>
    <level>warning</level>
    <log>$dir/log/clickhouse-server.log</log>
    <errorlog>$dir/log/clickhouse-server.err.log</errorlog>
    <size>50M</size>
    <count>3</count>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <tcp_port>$tcp_port</tcp_port>
  <http_port>$http_port</http_port>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <user_files_path>$dir/user_files/</user_files_path>
  <format_schema_path>$dir/format_schemas/</format_schema_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
  <max_concurrent_queries>100</max_concurrent_queries>
$(if [ -n "${GPUCOST_CH_EXTRA_XML:-}" ]; then cat "$GPUCOST_CH_EXTRA_XML"; fi)
</$rootel>
XML
  cat > "$dir/users.xml" <<XML
<?xml version="1.0"?>
<$rootel>
  <profiles>
    <default>
      <max_memory_usage>4000000000</max_memory_usage>
$(if [ "$rootel" = yandex ]; then echo "      <!-- 18.16: LowCardinality is experimental; ON CLUSTER DDL does not carry query settings to the other nodes -->"; echo "      <allow_experimental_low_cardinality_type>1</allow_experimental_low_cardinality_type>"; fi)
$(if [ -n "${GPUCOST_CH_PROFILE_XML:-}" ]; then cat "$GPUCOST_CH_PROFILE_XML"; fi)
    </default>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas><default></default></quotas>
</$rootel>
XML
}

start() {
  if answers; then
    say "already running on 127.0.0.1:$tcp_port (http $http_port)"
    return
  fi
  local cmd
  cmd=$(server_cmd)
  if [ -z "$cmd" ]; then
    install_server
    cmd=$(server_cmd)
  fi
  local rootel=yandex
  case "$cmd" in "clickhouse server") rootel=clickhouse ;; esac
  write_config "$rootel"
  say "starting ($cmd) on 127.0.0.1:$tcp_port, data in $dir"
  # setsid detaches it from make's process group so it outlives the make invocation.
  setsid $cmd --config-file="$dir/config.xml" >>"$dir/log/stdout.log" 2>&1 < /dev/null &
  echo $! > "$pidfile"
  for _ in $(seq 1 120); do
    if answers; then
      say "ready"
      return
    fi
    if ! running; then
      say "the server exited while starting; last log lines:"
      tail -n 20 "$dir/log/clickhouse-server.err.log" "$dir/log/stdout.log" >&2 2>/dev/null || true
      exit 1
    fi
    sleep 0.5
  done
  say "the server did not answer within 60 s; see $dir/log/"
  exit 1
}

stop() {
  if running; then
    local pid
    pid=$(cat "$pidfile")
    kill "$pid"
    for _ in $(seq 1 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    kill -9 "$pid" 2>/dev/null || true
    say "stopped"
  else
    say "not running (from $dir)"
  fi
  rm -f "$pidfile"
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) if answers; then say "running on 127.0.0.1:$tcp_port"; else say "not running"; exit 1; fi ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
