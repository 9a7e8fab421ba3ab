#!/usr/bin/env bash
# local.sh: a ClickHouse cluster on this machine for tests: 2 shards × 2 replicas (four servers
# on loopback ports) coordinated by a ZooKeeper from Debian's packages. It is what
# `make cluster` starts and `make test-cluster` runs gpucost's cluster tests against; production
# clusters use the configs beside this script (ClickHouse Keeper, one node per host).
#
#   deploy/clickhouse-cluster/local.sh start          ZooKeeper and the four nodes (installed when missing)
#   deploy/clickhouse-cluster/local.sh stop           all of it
#   deploy/clickhouse-cluster/local.sh stop-node N    stop node N (1..4), e.g. to test a replica outage
#   deploy/clickhouse-cluster/local.sh start-node N   start it again
#
# The nodes are Debian's ClickHouse 18.16 (deploy/clickhouse/local.sh with GPUCOST_CH_ENGINE=debian):
# replication does not work in the chDB engine that the single local server may run.
# Node N listens on 127.0.0.1:1910N (native) and 1811N (HTTP), replicates over 1912N; node 1 and
# 2 are shard 01, nodes 3 and 4 shard 02. ZooKeeper listens on 127.0.0.1:12181. Data and logs
# live in .data/cluster/ (git-ignored). The cluster is named gpucost.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${GPUCOST_CLUSTER_DIR:-$root/.data/cluster}
zk_port=12181
say() { printf 'cluster: %s\n' "$*" >&2; }

zk_answers() { echo srvr | timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$zk_port; cat >&3; cat <&3" 2>/dev/null | grep -q Mode; }

start_zk() {
  if zk_answers; then return; fi
  "$root/deploy/need.sh" cluster /usr/share/java/zookeeper.jar=zookeeper
  mkdir -p "$dir/zookeeper/data"
  cat > "$dir/zookeeper/zoo.cfg" <<CFG
tickTime=500
initLimit=10
syncLimit=5
dataDir=$dir/zookeeper/data
clientPort=$zk_port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=srvr,ruok
CFG
  say "starting ZooKeeper on 127.0.0.1:$zk_port"
  setsid java -Xmx256m -cp /usr/share/java/zookeeper.jar:/etc/zookeeper/conf \
    org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zookeeper/zoo.cfg" \
    >"$dir/zookeeper/out.log" 2>&1 </dev/null &
  echo $! > "$dir/zookeeper/pid"
  for _ in $(seq 1 60); do zk_answers && return; sleep 0.5; done
  say "ZooKeeper did not answer; see $dir/zookeeper/out.log"; exit 1
}

node_env() { # node number → the environment local.sh runs that node with
  local n=$1 shard=01
  [ "$n" -gt 2 ] && shard=02
  mkdir -p "$dir/node$n"
  cat > "$dir/node$n/cluster.xml" <<XML
  <interserver_http_port>1912$n</interserver_http_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <zookeeper><node><host>127.0.0.1</host><port>$zk_port</port></node></zookeeper>
  <macros><shard>$shard</shard><replica>node$n</replica></macros>
  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>
  <remote_servers>
    <gpucost>
      <shard><internal_replication>true</internal_replication>
        <replica><host>127.0.0.1</host><port>19101</port></replica>
        <replica><host>127.0.0.1</host><port>19102</port></replica>
      </shard>
      <shard><internal_replication>true</internal_replication>
        <replica><host>127.0.0.1</host><port>19103</port></replica>
        <replica><host>127.0.0.1</host><port>19104</port></replica>
      </shard>
    </gpucost>
  </remote_servers>
XML
  # 18.16 takes load_balancing only from a profile (gpucost sends it per query to current servers).
  echo '      <load_balancing>in_order</load_balancing>' > "$dir/node$n/profile.xml"
  echo "GPUCOST_CH_ENGINE=debian GPUCOST_LOCAL_DIR=$dir/node$n GPUCOST_CH_TCP_PORT=1910$n GPUCOST_CH_HTTP_PORT=1811$n GPUCOST_CH_EXTRA_XML=$dir/node$n/cluster.xml GPUCOST_CH_PROFILE_XML=$dir/node$n/profile.xml"
}

node() { # start|stop N
  env $(node_env "$2") "$root/deploy/clickhouse/local.sh" "$1"
}

case "${1:-start}" in
  start)
    start_zk
    for n in 1 2 3 4; do node start "$n"; done
    say "ready: cluster gpucost, nodes 127.0.0.1:19101-19104"
    ;;
  stop)
    for n in 1 2 3 4; do node stop "$n" || true; done
    if [ -f "$dir/zookeeper/pid" ]; then kill "$(cat "$dir/zookeeper/pid")" 2>/dev/null || true; rm -f "$dir/zookeeper/pid"; fi
    ;;
  stop-node) node stop "$2" ;;
  start-node) node start "$2" ;;
  *) echo "usage: $0 start|stop|stop-node N|start-node N" >&2; exit 2 ;;
esac
