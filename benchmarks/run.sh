#!/usr/bin/env bash
# Runs the benchmarks of issue 5 and prints the tables of docs/benchmarks.md:
# cases 1-7 (every contender's time, bytes and allocations per line, and
# zaplens's ratios), case 8 (the busy rank over OTLP/gRPC), and the CPU
# profile split of case 1. Raw results go to benchmarks/results/.
#
#   benchmarks/run.sh                 # about 7 minutes on 2 cores
#   COUNT=10 BENCHTIME=2s benchmarks/run.sh
set -euo pipefail
cd "$(dirname "$0")"

COUNT=${COUNT:-8}            # rounds; benchstat wants 6 or more for a 95% interval
BENCHTIME=${BENCHTIME:-500ms} # per run of each case 1-7 and lever benchmark
BUSY_COUNT=${BUSY_COUNT:-6}  # runs of each case 8 scenario (~6 s each with compute)
BENCHSTAT_VERSION=v0.0.0-20260908200009-22c9c6c9d4da
benchstat() { go run "golang.org/x/perf/cmd/benchstat@${BENCHSTAT_VERSION}" "$@"; }

out=results
mkdir -p "$out"
go test -c -o "$out/bench.test" .
bench() { (cd "$out" && ./bench.test -test.run='^$' "$@"); }

echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(go version)" | tee "$out/machine.txt"

# One run of every benchmark at a time, COUNT times over, so that a burst
# of load from elsewhere on the machine falls on all contenders alike.
echo "cases 1-7 and levers: $COUNT rounds, -benchtime=$BENCHTIME" >&2
: > "$out/line.txt"
: > "$out/lever.txt"
for i in $(seq "$COUNT"); do
	echo "round $i" >&2
	bench -test.bench='^BenchmarkLine$' -test.benchmem -test.benchtime="$BENCHTIME" >> "$out/line.txt"
	bench -test.bench='^BenchmarkLever$' -test.benchmem -test.benchtime="$BENCHTIME" >> "$out/lever.txt"
done

echo "case 8: $BUSY_COUNT rounds of 10 steps x 10,000 lines" >&2
: > "$out/busy.txt"
for i in $(seq "$BUSY_COUNT"); do
	ZAPLENS_BENCH_BUSY=full bench -test.bench='^BenchmarkBusyRank$' -test.benchtime=1x | tee -a "$out/busy.txt" >&2
done

echo "profiles of case 1" >&2
for b in zaplens official sdk-floor; do
	if grep -q "case=1-info-5-fields-ctx/bridge=$b-" "$out/line.txt"; then
		bench -test.bench="^BenchmarkLine\$/^case=1-info-5-fields-ctx\$/^bridge=$b\$" -test.benchtime=3s \
			-test.cpuprofile="case1-$b.prof" >&2
	fi
done

benchstat -col /bridge -row /case "$out/line.txt" > "$out/line-benchstat.txt"
benchstat -col /bridge -row /lever "$out/lever.txt" > "$out/lever-benchstat.txt"
benchstat -col /bridge -row /compute "$out/busy.txt" > "$out/busy-benchstat.txt"

echo
echo "## Cases 1-7"
echo
benchstat -col /bridge -row /case -format csv "$out/line.txt" 2>/dev/null | go run ./cmd/benchtable
echo
echo "## Case 1 with the levers a user has"
echo
benchstat -col /bridge -row /lever -format csv "$out/lever.txt" 2>/dev/null | go run ./cmd/benchtable
echo
echo "## Case 8"
echo
benchstat -col /bridge -row /compute -format csv "$out/busy.txt" 2>/dev/null | go run ./cmd/benchtable -busy
for b in zaplens official sdk-floor; do
	if [ -f "$out/case1-$b.prof" ]; then
		echo
		echo "## Case 1 CPU profile: $b"
		echo
		go run ./cmd/profsplit "$out/case1-$b.prof"
	fi
done
