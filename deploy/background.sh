# background.sh: the life of a server that a local.sh script starts in the background
# (deploy/clickhouse/local.sh, deploy/prometheus/local.sh), sourced by them. The script sets
# $pidfile (the server's process id, written when it starts it with setsid, so the process
# leads a group of its own), $dir (its folder) and a say function before it sources this.

# running reports whether the server of $pidfile is alive.
running() {
  [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

# stop stops the server: TERM, then after 30 s KILL to its whole process group.
stop() {
  if running; then
    local pid
    pid=$(cat "$pidfile")
    kill "$pid"
    for _ in $(seq 1 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    if kill -0 "$pid" 2>/dev/null; then
      say "still running after 30 s: killing it"
      kill -9 -- "-$pid" 2>/dev/null || true # its whole process group: setsid made it the leader
    fi
    say "stopped"
  else
    say "not running (from $dir)"
  fi
  rm -f "$pidfile"
}
