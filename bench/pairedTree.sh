#!/bin/bash
# Paired rounds of `labstation harvest --once` on a tree of 10,000 files of 100 KiB in 100
# folders, two builds against each other and `cp -r` + `sync`, the order turning each round.
# Usage (as root, for drop_caches): bench/pairedTree.sh BUILD_A BUILD_B [ROUNDS] [WORK_DIR]
# where BUILD_A and BUILD_B are checkouts with `npm run build:core` done and node_modules.
# Each run: a fresh data dir made with `labstation import`, caches dropped, then timed until
# the command ends (harvest) or sync returns (cp); the file count of the copy is printed too.
# SRC=DIR harvests that folder instead (e.g. one holding a single big file), kept as it is.
set -euo pipefail
A=$(realpath "$1"); B=$(realpath "$2"); ROUNDS=${3:-5}; W=${4:-/tmp/labstation-paired}
SRC=${SRC:-$W/src}
if [ ! -d "$SRC" ]; then
  for d in $(seq -w 0 99); do
    mkdir -p "$SRC/d$d"
    for f in $(seq -w 0 99); do head -c 102400 /dev/urandom > "$SRC/d$d/f$f.bin"; done
  done
fi
bundle() {
  printf '{"tools":[{"name":"BENCH"}],"station":{"tool":"BENCH"},"storage_locations":[{"name":"out","type":"local","base_path":"%s"}],"instruments":[{"name":"bench","tool":"BENCH","watch":[{"path":"%s"}],"stability_seconds":0,"storage_location":"out","destination_template":"{relative_path}"}]}' "$1" "$SRC"
}
build() { if [ "$1" = A ]; then echo "$A"; else echo "$B"; fi; }
for r in $(seq 1 "$ROUNDS"); do
  case $((r % 3)) in 0) order="A B cp" ;; 1) order="B cp A" ;; 2) order="cp A B" ;; esac
  line="round $r:"
  for who in $order; do
    rm -rf "$W/out" "$W/data"; mkdir -p "$W/out"; sync
    if [ "$who" != cp ]; then
      bundle "$W/out" > "$W/bundle.json"
      LABSTATION_LOG_LEVEL=warn node "$(build $who)/bin/labstation.js" import --data "$W/data" "$W/bundle.json" > /dev/null
    fi
    sync; echo 3 > /proc/sys/vm/drop_caches
    s=$(date +%s.%N)
    if [ "$who" = cp ]; then
      cp -r "$SRC/." "$W/out/" && sync
    else
      LABSTATION_LOG_LEVEL=warn node "$(build $who)/bin/labstation.js" harvest --data "$W/data" --once > /dev/null
    fi
    e=$(date +%s.%N)
    line="$line $who=$(echo "$e - $s" | bc | cut -c1-5)s($(find "$W/out" -type f | wc -l))"
  done
  echo "$line"
done
rm -rf "$W/out" "$W/data"
