#!/bin/bash
# Paired starts of the `labstation` command, two builds against each other, the order turning
# each round. Usage: bench/commandStart.sh BUILD_A BUILD_B [ROUNDS] [WORK_DIR]
# where BUILD_A and BUILD_B are checkouts with `npm run build:core` done and node_modules.
# Per round and build, one line `ROUND BUILD COMMAND WALL_MS CPU_MS`:
# - station, serve: from the start until the process prints that it is ready; CPU is the
#   process's (all its threads, /proc/PID/stat) at that moment; then it is stopped.
# - harvest (`--once` on a station whose folder is empty), import (a bundle into a new data dir):
#   the whole run; CPU from /usr/bin/time.
# Ends with the medians per command and build.
set -euo pipefail
A=$(realpath "$1"); B=$(realpath "$2"); ROUNDS=${3:-9}; W=${4:-/tmp/labstation-starts}
rm -rf "$W"; mkdir -p "$W/src" "$W/out"
printf '{"tools":[{"name":"BENCH"}],"station":{"tool":"BENCH"},"storage_locations":[{"name":"out","type":"local","base_path":"%s"}],"instruments":[{"name":"bench","tool":"BENCH","watch":[{"path":"%s"}],"stability_seconds":0,"storage_location":"out","destination_template":"{relative_path}"}]}' "$W/out" "$W/src" > "$W/bundle.json"
export LABSTATION_LOG_LEVEL=warn
node "$A/bin/labstation.js" import --data "$W/station" "$W/bundle.json" > /dev/null
# A server data dir with its first admin: one start, stopped once it is ready.
LABSTATION_ADMIN_EMAIL=admin@example.org LABSTATION_ADMIN_PASSWORD=bench-password-1 \
  node "$A/bin/labstation.js" serve --data "$W/server" --port 0 > "$W/first" 2>&1 &
first=$!
until grep -q 'ready' "$W/first"; do sleep 0.05; done
kill "$first"; wait "$first" || true

ms() { echo $(( $(date +%s%N) / 1000000 )); }
ready() { # COMMAND...: wall and CPU until it says it is ready
  local start; start=$(ms)
  "$@" > "$W/said" 2>&1 &
  local pid=$!
  until grep -q 'ready' "$W/said"; do sleep 0.005; done
  local end; end=$(ms)
  local ticks; ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  kill "$pid"; wait "$pid" || true
  echo "$((end - start)) $((ticks * 1000 / $(getconf CLK_TCK)))"
}
whole() { # COMMAND...: wall and CPU of the whole run
  local start; start=$(ms)
  /usr/bin/time -f '%U %S' -o "$W/time" "$@" > /dev/null 2>&1
  local end; end=$(ms)
  echo "$((end - start)) $(awk '{printf "%d", ($1 + $2) * 1000}' "$W/time")"
}
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 0 ]; then order="B A"; else order="A B"; fi
  for who in $order; do
    if [ "$who" = A ]; then app=$A; else app=$B; fi
    echo "$r $who station $(ready node "$app/bin/labstation.js" station --data "$W/station" --port 0)"
    echo "$r $who serve $(ready node "$app/bin/labstation.js" serve --data "$W/server" --port 0)"
    echo "$r $who harvest $(whole node "$app/bin/labstation.js" harvest --data "$W/station" --once)"
    rm -rf "$W/imported"
    echo "$r $who import $(whole node "$app/bin/labstation.js" import --data "$W/imported" "$W/bundle.json")"
  done
done | tee "$W/runs"
python3 - "$W/runs" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    _, who, command, wall, cpu = line.split()
    runs.setdefault((command, who), []).append((int(wall), int(cpu)))
for command in ('station', 'serve', 'harvest', 'import'):
    cells = []
    for who in ('A', 'B'):
        got = runs[(command, who)]
        wall = statistics.median(w for w, _ in got)
        cpu = statistics.median(c for _, c in got)
        cells.append(f'{who}: {wall:.0f} ms wall, {cpu:.0f} ms CPU')
    print(f'{command:8} ' + ' | '.join(cells))
PY
rm -rf "$W"
