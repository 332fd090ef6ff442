#!/bin/sh
# Runs one busy-rank measurement of the README ("Sending logs to a collector") against a fresh local
# OTLP/gRPC sink on 127.0.0.1:4317, under /usr/bin/time -v for the peak RSS.
# Arguments go to burst.go, e.g.:
#   docs/busyrank/run.sh -mode zaplens                 # 10 x 10,000 lines, 0.5 s compute
#   docs/busyrank/run.sh -mode zaplens -compute 0      # overload: back to back
#   docs/busyrank/run.sh -mode sdk                     # the SDK's defaults
#   docs/busyrank/run.sh -mode zaplens -compute 0 -block 100ms
set -e
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/sink" docs/busyrank/sink.go
go build -o "$bin/burst" docs/busyrank/burst.go
"$bin/sink" -addr 127.0.0.1:4317 > "$bin/sink.out" &
sink=$!
sleep 0.3
/usr/bin/time -v "$bin/burst" -endpoint 127.0.0.1:4317 "$@" 2> "$bin/time.out" || true
sleep 0.5
kill -TERM $sink
wait $sink || true
cat "$bin/sink.out"
grep "Maximum resident" "$bin/time.out"
