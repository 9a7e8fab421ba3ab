#!/usr/bin/env bash
# local.sh: a ClickHouse server for development, tests and the demo, with no manual step.
#
#   deploy/clickhouse/local.sh start   get a server if none is installed, start it, wait until it answers
#   deploy/clickhouse/local.sh stop    stop it
#   deploy/clickhouse/local.sh status  say whether it runs, and which server it is
#   deploy/clickhouse/local.sh chdb    get the chDB engine and its launcher; print both paths
#
# Which server (GPUCOST_CH_ENGINE):
#   auto (default)  the first that can be had of: official, chdb, debian
#   current         official or chdb, never 18.16 (`make test` asks for this)
#   official        the official single binary `clickhouse` on PATH (`clickhouse server`)
#   chdb            today's engine from the npm package @chdb/lib-linux-x64-gnu, served over the
#                   native protocol and HTTP by deploy/clickhouse/chdb-server (built here with gcc);
#                   fetched once into $GPUCOST_CHDB_DIR (default .data/chdb), about 180 MB
#   debian          Debian's clickhouse-server package, ClickHouse 18.16 from 2018 (`make
#                   test-legacy` and the cluster of deploy/clickhouse-cluster use it)
# Missing pieces (npm, gcc, clickhouse-server) are installed with apt-get when this runs as root on
# Debian; otherwise it says what to install (deploy/need.sh).
#
# The server listens on 127.0.0.1 only, on non-default ports (so it never clashes with a system
# ClickHouse), and keeps its data and logs under $GPUCOST_LOCAL_DIR (default: .data/clickhouse in
# the work tree, git-ignored). Data written by 18.16 and by a current server are kept apart: a
# folder made by one is refused to the other, with the way out.
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
wanted=${GPUCOST_CH_ENGINE:-auto}
pidfile=$dir/clickhouse.pid
marker=$dir/engine       # the generation of server that made the data folder: "current" or "legacy"
started=$dir/engine.name # the HTTP port and the server this script started on it
case "$wanted" in
  auto | current | official | chdb | debian) ;;
  *) echo "clickhouse: GPUCOST_CH_ENGINE=$wanted: want auto, current, official, chdb or debian" >&2; exit 2 ;;
esac

chdb_package=@chdb/lib-linux-x64-gnu@26.7.3-stable.1
chdb_dir=${GPUCOST_CHDB_DIR:-$root/.data/chdb}
chdb_lib=$chdb_dir/${chdb_package##*@}/libchdb.so
launcher=$chdb_dir/chdb-server
launcher_src=$root/deploy/clickhouse/chdb-server/chdb-server.c

say() { printf 'clickhouse: %s\n' "$*" >&2; }
# running and stop.
source "$root/deploy/background.sh"
need() { "$root/deploy/need.sh" "clickhouse ($1 engine)" "${@:2}"; }

# Each engine's getter sets cmd (the command that runs the server in the foreground), rootel (the
# config's root element: 18.16 wants <yandex>, current servers <clickhouse>) and generation; it
# fails when the engine cannot be had here.
get_official() {
  command -v clickhouse >/dev/null 2>&1 && clickhouse server --help >/dev/null 2>&1 || return 1
  cmd=(clickhouse server) rootel=clickhouse generation=current
}

get_chdb() {
  need chdb npm=npm gcc=gcc /usr/include/stdio.h=libc6-dev || return 1
  mkdir -p "$chdb_dir" || return 1
  if [ ! -f "$chdb_lib" ]; then
    say "fetching $chdb_package from the npm registry (once: 180 MB, 570 MB unpacked) ..."
    local tmp
    tmp=$(mktemp -d "$chdb_dir/fetch.XXXXXX") || return 1
    if ! (cd "$tmp" && npm pack --silent "$chdb_package" >/dev/null && tar xzf ./*.tgz) ||
      ! mkdir -p "$(dirname "$chdb_lib")" || ! mv "$tmp/package/libchdb.so" "$chdb_lib"; then
      rm -rf "$tmp"
      say "could not fetch $chdb_package"
      return 1
    fi
    rm -rf "$tmp"
  fi
  if [ ! -x "$launcher" ] || [ "$launcher_src" -nt "$launcher" ]; then
    local built
    built=$(mktemp "$launcher.XXXXXX") || return 1
    if ! gcc -O2 -Wall -Wextra -Werror -o "$built" "$launcher_src" -ldl || ! mv "$built" "$launcher"; then
      rm -f "$built"
      say "could not build $launcher_src"
      return 1
    fi
  fi
  # clickhouse-local takes the log level from its command line, not from the config.
  cmd=("$launcher" "$chdb_lib" --log-level=warning) rootel=clickhouse generation=current
}

get_debian() {
  need debian clickhouse-server=clickhouse-server || return 1
  cmd=("$(command -v clickhouse-server)") rootel=yandex generation=legacy
}

choose_engine() {
  case "$wanted" in
    official)
      get_official || { say "no official clickhouse binary on PATH: curl https://clickhouse.com/ | sh  (or: brew install clickhouse)"; exit 1; } ;;
    chdb) get_chdb || exit 1 ;;
    debian) get_debian || exit 1 ;;
    current | auto)
      if get_official || get_chdb; then return; fi
      if [ "$wanted" = current ]; then
        say "no current ClickHouse here: install the official binary (curl https://clickhouse.com/ | sh) or let this script fetch the chDB engine (needs npm and gcc)"
        exit 1
      fi
      say "no current engine could be had; falling back to Debian's clickhouse-server (18.16)"
      get_debian || {
        say "no ClickHouse server at all. Install one, then run this again:"
        say "  the official binary: curl https://clickhouse.com/ | sh   (or: brew install clickhouse)"
        say "  or use Docker:        docker compose up -d clickhouse   (then set GPUCOST_CLICKHOUSE_DSN)"
        exit 1
      } ;;
  esac
}

answers() {
  # The HTTP interface answers "Ok." on / once the server accepts queries.
  curl -fsS --max-time 1 "http://127.0.0.1:$http_port/" 2>/dev/null | grep -q Ok
}

version() { curl -fsS --max-time 5 "http://127.0.0.1:$http_port/" --data-binary "SELECT version()" 2>/dev/null; }

# describe says which server answers: its version, and the engine when this script started it.
describe() {
  local v engine="" port name
  v=$(version) || v="(version unknown)"
  if running && read -r port name < "$started" 2>/dev/null && [ "$port" = "$http_port" ]; then
    engine=" ($name)"
  fi
  echo "ClickHouse $v$engine on 127.0.0.1:$tcp_port (http $http_port)"
}

# generation_of prints "legacy" for an 18.x (or older) version string, "current" otherwise.
generation_of() { case "$1" in 1[0-8].*) echo legacy ;; *) echo current ;; esac; }

# check_running refuses a server already on the ports that is not of the generation asked for.
check_running() {
  local g
  g=$(generation_of "$(version)")
  case "$wanted" in
    debian) [ "$g" = legacy ] && return ;;
    current | official | chdb) [ "$g" = current ] && return ;;
    auto) return ;;
  esac
  say "$(describe) already answers, but GPUCOST_CH_ENGINE=$wanted asks for another server."
  say "Stop it first (make clickhouse-stop), or use other ports (GPUCOST_CH_TCP_PORT, GPUCOST_CH_HTTP_PORT)."
  exit 1
}

# check_data_folder refuses a data folder made by a server of the other generation: 18.16 cannot
# read what a current server writes, and a current server would convert 18.16's files in place.
check_data_folder() {
  local made=""
  if [ -f "$marker" ]; then
    made=$(cat "$marker")
  elif [ -d "$dir/data/store" ]; then
    made=current # made before this script recorded it: only current servers keep a store/ folder
  elif [ -d "$dir/data/metadata" ]; then
    made=legacy
  fi
  if [ -n "$made" ] && [ "$made" != "$generation" ]; then
    say "$dir holds data of a $made ClickHouse; this start would run a $generation one (${cmd[*]})."
    say "Keep both by giving this one its own folder (GPUCOST_LOCAL_DIR=...), or remove the old data: rm -rf $dir"
    exit 1
  fi
}

# write_config writes config.xml and users.xml for the chosen server.
write_config() {
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
$(if [ "$generation" = legacy ]; then echo "      <!-- 18.16: LowCardinality is experimental; ON CLUSTER DDL does not carry query settings to the other nodes -->"; echo "      <allow_experimental_low_cardinality_type>1</allow_experimental_low_cardinality_type>"; fi)
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
    check_running
    say "already running: $(describe)"
    return
  fi
  choose_engine
  check_data_folder
  write_config
  echo "$generation" > "$marker"
  local name
  case "${cmd[0]}" in
    "$launcher") name="chDB engine $chdb_package, served by deploy/clickhouse/chdb-server" ;;
    clickhouse) name="official binary $(command -v clickhouse)" ;;
    *) name="Debian's clickhouse-server" ;;
  esac
  echo "$http_port $name" > "$started"
  say "starting $name on 127.0.0.1:$tcp_port, data in $dir"
  # setsid detaches it from make's process group so it outlives the make invocation.
  setsid "${cmd[@]}" --config-file="$dir/config.xml" >>"$dir/log/stdout.log" 2>&1 < /dev/null &
  echo $! > "$pidfile"
  for _ in $(seq 1 240); do
    if answers; then
      say "ready: $(describe)"
      return
    fi
    if ! running; then
      say "the server exited while starting; last log lines:"
      tail -n 20 "$dir/log/clickhouse-server.err.log" "$dir/log/stdout.log" >&2 2>/dev/null || true
      exit 1
    fi
    sleep 0.25
  done
  say "the server did not answer within 60 s; see $dir/log/"
  exit 1
}


case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) if answers; then say "running: $(describe)"; else say "not running"; exit 1; fi ;;
  chdb) get_chdb && echo "$launcher $chdb_lib" ;;
  *) echo "usage: $0 start|stop|status|chdb" >&2; exit 2 ;;
esac
