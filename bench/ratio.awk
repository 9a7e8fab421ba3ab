# ratio.awk: reads `go test -bench` output, prints each benchmark line's metrics named in show
# (space-separated units) and, per benchmark, the median of the metric named in metric.
#   awk -f bench/ratio.awk -v metric='×client' -v show='offers/s ×client'
/^Benchmark/ {
  name = $1
  sub(/-[0-9]+$/, "", name)
  line = name
  for (i = 3; i < NF; i++) {
    if (index(" " show " ", " " $(i + 1) " ")) line = line sprintf("  %s %s", $i, $(i + 1))
    if ($(i + 1) == metric) values[name] = values[name] " " $i
  }
  print line
  next
}
/^(FAIL|panic|---)/ { print; failed = 1 }
END {
  for (name in values) {
    n = split(substr(values[name], 2), v, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
    median = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    printf "%s: median %s %.3g (%d runs)\n", name, metric, median, n
  }
  exit failed
}
