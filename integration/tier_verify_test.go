//go:build linux

package integration

// The tier's counts, all through vlselect, and its report.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zaplens/zaplens/internal/gateways"
)

// drain waits until what the services logged has gone through the
// gateways' queues into VictoriaLogs: the count through vlselect reaches
// what was logged and stays for 10 s, or stops moving for 60 s, at most 5
// minutes. It returns the count.
func (tr *tier) drain(note func(string, ...any)) (rows int, last time.Time) {
	var want uint64
	for _, s := range tr.services {
		for _, l := range s.lives {
			want += sum(l.logged)
		}
	}
	deadline := time.Now().Add(5 * time.Minute)
	prev, since := -1, time.Now()
	for {
		n := tr.count("*")
		if n != prev {
			prev, since = n, time.Now()
		}
		still := time.Since(since)
		if (uint64(n) >= want && still >= 10*time.Second) || still >= 60*time.Second || time.Now().After(deadline) {
			note("%d rows stored of %d lines logged (stable for %v)", n, want, still.Round(time.Second))
			return n, since
		}
		time.Sleep(time.Second)
	}
}

// count is `query | count()` through vlselect, after the storage nodes
// have made what they took searchable.
func (tr *tier) count(query string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := tr.vl.Count(ctx, query)
	if err != nil {
		tr.t.Logf("count %q: %v", query, err)
		return -1
	}
	return n
}

// tierGroup is what vlselect holds of one goroutine of one life of a
// service.
type tierGroup struct {
	service          string
	life, g          int
	logged           uint64 // calls that returned
	distinct, stored int    // of seq < logged
	beyond           int    // rows of seq >= logged: logged as the process was killed, its count not yet written
}

func (tr *tier) groups() []tierGroup {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []tierGroup
	for _, s := range tr.services {
		for life, l := range s.lives {
			for g, n := range l.logged {
				q := fmt.Sprintf(`"service.name":=%q life:=%d g:=%d`, s.name, life, g)
				rows, err := tr.vl.Select.Query(ctx, fmt.Sprintf("%s seq:<%d | stats count() n, count_uniq(seq) u", q, n))
				if err != nil || len(rows) != 1 {
					tr.t.Fatalf("%s: %v %v", q, rows, err)
				}
				gr := tierGroup{service: s.name, life: life, g: g, logged: n}
				gr.stored, _ = strconv.Atoi(rows[0]["n"])
				gr.distinct, _ = strconv.Atoi(rows[0]["u"])
				beyond, err := tr.vl.Select.Count(ctx, fmt.Sprintf("%s seq:>=%d", q, n))
				if err != nil {
					tr.t.Fatal(err)
				}
				gr.beyond = beyond
				out = append(out, gr)
			}
		}
	}
	return out
}

// traces checks that every burst is found by its trace id, whole: it
// returns the bursts expected and those whose lines are not all there.
func (tr *tier) traces() (bursts int, missing []string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows, err := tr.vl.Select.Query(ctx, "* | stats by (trace_id) count_uniq(seq) u")
	if err != nil {
		tr.t.Fatal(err)
	}
	found := map[string]int{}
	for _, r := range rows {
		found[r["trace_id"]], _ = strconv.Atoi(r["u"])
	}
	for _, s := range tr.services {
		for life, l := range s.lives {
			for g, n := range l.logged {
				for b := 0; uint64(b*tierBurst) < n; b++ {
					bursts++
					want := min(tierBurst, int(n)-b*tierBurst)
					id := tierTraceID(s.name, life, g, b).String()
					if found[id] < want {
						missing = append(missing, fmt.Sprintf("%s life %d g %d burst %d (trace %s): %d of %d lines", s.name, life, g, b, id, found[id], want))
					}
				}
			}
		}
	}
	return bursts, missing
}

// report counts, logs the figures, and fails the test on a line lost, a
// record counted failed, a burst not found, or more duplicates than the
// killed processes' requests in flight can make.
func (tr *tier) report(logging, drained time.Duration, rows int, cpu map[string]time.Duration) {
	t := tr.t
	var logged uint64
	var lost, dups, beyond int
	var perKilled []string
	for _, gr := range tr.groups() {
		logged += gr.logged
		lost += int(gr.logged) - gr.distinct
		dups += gr.stored - gr.distinct
		beyond += gr.beyond
		if int(gr.logged) != gr.distinct || gr.stored != gr.distinct {
			perKilled = append(perKilled, fmt.Sprintf("  %s life %d g %d: logged %d, stored %d distinct, %d duplicated",
				gr.service, gr.life, gr.g, gr.logged, gr.distinct, gr.stored-gr.distinct))
		}
	}
	t.Logf("lines logged %d (calls that returned), stored %d distinct, lost %d, duplicated %d; %d more rows of lines logged as a service was killed; %d rows in all",
		logged, int(logged)-lost, lost, dups, beyond, rows)
	for _, s := range perKilled {
		t.Log(s)
	}
	t.Logf("lines per second logged: %.0f (%d lines in %v); stored through the tier: %.0f (%d rows, the last stored %v after the start, within 1 s)",
		float64(logged)/logging.Seconds(), logged, logging.Round(time.Millisecond),
		float64(rows)/drained.Seconds(), rows, drained.Round(time.Second))

	var total float64
	shares := make([]float64, len(tr.gateways))
	for i, gw := range tr.gateways {
		gw.mu.Lock()
		for _, v := range gw.accepted {
			shares[i] += v
		}
		gw.mu.Unlock()
		total += shares[i]
	}
	for i, gw := range tr.gateways {
		gw.mu.Lock()
		accepted, sent := slices.Clone(gw.accepted), slices.Clone(gw.sent)
		gw.mu.Unlock()
		t.Logf("gateway %s: accepted %.0f records (%.1f%%); per life accepted %v, sent to VictoriaLogs %v",
			gw.host, shares[i], 100*shares[i]/total, accepted, sent)
	}

	bursts, missing := tr.traces()
	t.Logf("bursts (traces) %d, found whole by trace id %d", bursts, bursts-len(missing))
	for _, m := range missing[:min(len(missing), 10)] {
		t.Log("  not whole: " + m)
	}

	var failed uint64
	var svcCPU time.Duration
	for _, s := range tr.services {
		l := s.lives[len(s.lives)-1]
		st := l.report.Stats
		failed += st.Failed
		svcCPU += l.report.CPU
		t.Logf("%s (%s, life %d): emitted %d exported %d failed %d dropped %d recovered %d (exported %d); CPU %v; shutdown %q",
			s.name, s.proto.Short(), len(s.lives)-1, st.Emitted, st.Exported, st.Failed, st.Dropped, st.Recovered, st.RecoveredExported,
			l.report.CPU.Round(time.Millisecond), l.report.ShutdownErr)
		for _, line := range strings.Split(strings.TrimSpace(l.stderr.String()), "\n") {
			if line != "" {
				t.Logf("  %s told: %s", s.name, line)
			}
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range cpu {
			if !yield(k) {
				return
			}
		}
	})
	var parts []string
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%s %v", k, cpu[k].Round(10*time.Millisecond)))
	}
	t.Logf("CPU over the run (%v): services' last lives %v in all; %s", logging.Round(time.Second), svcCPU.Round(10*time.Millisecond), strings.Join(parts, "; "))

	// One request per killed process: the killed service's one batch in
	// flight; for the killed gateway, one request of each sender that had
	// one in flight to it (a service's batch each) and each of its own
	// requests to VictoriaLogs that its queue had not yet seen answered
	// (the sending queue's largest batch, max_size, per queue consumer),
	// as the gateway's configuration sets them.
	unanswered, err := gateways.UnansweredRecords(tr.gwConfig)
	if err != nil {
		t.Fatal(err)
	}
	bound := tierSettings.batch + len(tr.services)*tierSettings.batch + unanswered
	switch {
	case lost > 0:
		t.Errorf("%d lines lost", lost)
	case dups > bound:
		t.Errorf("%d lines duplicated, more than the %d the killed processes' requests in flight can make", dups, bound)
	}
	if failed > 0 {
		t.Errorf("%d records counted failed, while at least two replicas were up", failed)
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d bursts not found whole by their trace id", len(missing), bursts)
	}
	for i, gw := range tr.gateways {
		if gw.restart.IsZero() {
			continue
		}
		how := "started again"
		if gw.host == tierSpareHost {
			how = "added"
		}
		took, ok := tr.takeover(i)
		switch {
		case !ok:
			t.Errorf("gateway %s, %s, never took its share in a %v window", gw.host, how, tierShareWindow)
		case took > tierTakeoverBound:
			t.Errorf("gateway %s, %s, took %v to take its share, more than one re-resolution (%v)", gw.host, how, took, tierTakeoverBound)
		default:
			t.Logf("gateway %s, %s, took its share (at least 3/4 of an even share of a %v window) %v after", gw.host, how, tierShareWindow, took.Round(100*time.Millisecond))
		}
	}
	for i := range tr.gateways {
		if tr.gateways[i].host == tierSpareHost {
			continue // up for the run's last third only: its take-over is what counts
		}
		if share := shares[i] / total; share < 0.25 || share > 0.42 {
			t.Errorf("gateway %s took %.1f%% of the records, outside 25%%..42%%", tr.gateways[i].host, 100*share)
		}
	}
}

// A replica started again or added must take its share within one re-resolution
// (internal/transport re-resolves every 10 s, and at once when a
// connection is lost), measured over windows of 2 s of 500 ms scrapes.
const (
	tierShareWindow   = 2 * time.Second
	tierTakeoverBound = 10*time.Second + tierShareWindow + time.Second
)

// takeover is how long replica i, started again or added, took to take
// its share: from then to the end of the first window after it in which it
// accepted at least 3/4 of an even share of the tier's records, among the
// replicas that have taken any (a quarter of three, 3/16 of four).
func (tr *tier) takeover(i int) (time.Duration, bool) {
	restart := tr.gateways[i].restart
	for j, a := range tr.samples {
		if a.at.Before(restart) {
			continue
		}
		for _, b := range tr.samples[j+1:] {
			if b.at.Sub(a.at) < tierShareWindow {
				continue
			}
			var total float64
			up := 0
			for k := range b.accepted {
				total += b.accepted[k] - a.accepted[k]
				if b.accepted[k] > 0 || k == i {
					up++
				}
			}
			if total > 0 && (b.accepted[i]-a.accepted[i])/total >= 0.75/float64(up) {
				return b.at.Sub(restart), true
			}
			break
		}
	}
	return 0, false
}
