#!/bin/bash
# Paired runs of a running station on a data dir whose files are all harvested already: two
# builds in turn, ROUNDS times. Each station is started, its CPU read once it has settled (at
# 27 s) and again 60 s later (two walks, with the data dir's `"rescan_minutes": 0.5`); peak RSS is
# its VmHWM then. Usage: bench/pairedWalks.sh BUILD_A BUILD_B DATA_DIR [ROUNDS]
# where BUILD_A and BUILD_B are checkouts with `npm run build:core` done and node_modules, and
# DATA_DIR was made with `labstation import` and harvested with `labstation harvest --once`.
set -euo pipefail
A=$(realpath "$1"); B=$(realpath "$2"); DATA=$(realpath "$3"); ROUNDS=${4:-2}
cpu() { awk '{print ($14+$15)/100}' "/proc/$1/stat"; }
for round in $(seq 1 "$ROUNDS"); do
  for build in "$A" "$B"; do
    LABSTATION_LOG_LEVEL=warn node "$build/bin/labstation.js" harvest --data "$DATA" > /dev/null 2>&1 &
    pid=$!
    sleep 27; settled=$(cpu $pid)
    sleep 60; walked=$(cpu $pid)
    peak=$(awk '/VmHWM/ {print int($2/1024)}' "/proc/$pid/status")
    echo "round $round $build: settled $settled CPU s; two walks $(echo "$walked - $settled" | bc) CPU s; peak $peak MiB"
    kill -INT $pid; wait $pid || true
  done
done
