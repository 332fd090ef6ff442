#!/usr/bin/env bash
# Counts one benchmark's instructions per op, the whole process's (every
# goroutine's, the runtime's and the GC's), under valgrind: two runs, of
# N1 and N2 iterations, and their difference over N2-N1, so that start-up
# and the harness cancel out. GOMAXPROCS=1, no asynchronous preemption and
# no GC (GOGC=off) keep out the runtime's work whose amount depends on
# timing: idle threads spinning, a concurrent mark sharing the one CPU with
# the loop. Counts then repeat to within 0.5%; run one at a time, since a
# loaded machine changes them.
#
# Instructions are not time: a cache miss, a system call or an allocation
# (whose GC is left out here; count allocations with -benchmem) costs more
# than its count says. But the count does not move
# with the machine's neighbours, so it settles a change of 50 ns that
# timing on a shared two-core VM cannot (docs/costs.md).
#
#   go test -c -o /tmp/root.test . && benchmarks/icount.sh /tmp/root.test 'CallParts/zap-alone$'
#   (cd benchmarks && go test -c -o /tmp/bench.test .) &&
#     ZAPLENS_BENCH_HEAP=0 benchmarks/icount.sh /tmp/bench.test '^BenchmarkCall$/bridge=zaplens$' 20000 60000
#
# ICOUNT_KEEP=DIR keeps the two runs' cachegrind output, as
# DIR/cachegrind.out.N1 and DIR/cachegrind.out.N2 (one DIR per benchmark),
# for the count by function: cg_diff of the two files, the N2-N1
# iterations' instructions, read with cg_annotate; the cg_diff files of two
# benchmarks, diffed again, tell where one's extra instructions go.
#
#   ICOUNT_KEEP=/tmp/cg-zap benchmarks/icount.sh /tmp/root.test 'CallParts/zap-alone$' &&
#     cg_diff /tmp/cg-zap/cachegrind.out.10000 /tmp/cg-zap/cachegrind.out.30000 > /tmp/cg-zap/diff &&
#     cg_annotate --threshold=0 /tmp/cg-zap/diff
#
# Needs valgrind (apt install valgrind). cpu.rdtscp=off keeps the runtime
# off RDTSCP, which valgrind 3.19 does not know (SIGILL).
set -euo pipefail
bin=$1 re=$2 n1=${3:-10000} n2=${4:-30000}
keep=${ICOUNT_KEEP:-}
if [ -n "$keep" ]; then
	mkdir -p "$keep"
fi
count() {
	local out=/dev/null
	if [ -n "$keep" ]; then
		out="$keep/cachegrind.out.$1"
	fi
	GOGC=off GOMAXPROCS=1 GODEBUG="asyncpreemptoff=1,cpu.rdtscp=off${GODEBUG:+,$GODEBUG}" valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out" \
		"$bin" -test.run '^$' -test.bench "$re" -test.benchtime "${1}x" 2>&1 |
		sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d ,
}
a=$(count "$n1")
b=$(count "$n2")
if [ -z "$a" ] || [ -z "$b" ]; then
	echo "icount: valgrind gave no count for $re" >&2
	exit 1
fi
echo "$re $(((b - a) / (n2 - n1))) instructions/op"
