package main

// What the -victorialogs and -tier modes do once they have printed: keep
// their processes up for the user to click through, until Ctrl-C, or exit
// at once (-exit).

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"
)

// process is a running process the example started: VictoriaLogs or a
// Collector.
type process interface {
	Exited() <-chan struct{}
	Output() string
}

// named is a process and what the user knows it as.
type named struct {
	name string
	process
}

// untilInterrupt says that what keeps running, and waits for Ctrl-C, or
// for one of procs to exit on its own.
func untilInterrupt(ctx context.Context, what string, procs ...named) error {
	fmt.Printf("\n%s keeps running for you to click; Ctrl-C stops it and removes its data.\n", what)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	exited := make(chan named, len(procs))
	for _, p := range procs {
		go func() {
			select {
			case <-p.Exited():
				exited <- p
			case <-ctx.Done():
			}
		}()
	}
	select {
	case <-ctx.Done():
		return nil
	case p := <-exited:
		// Ctrl-C in a terminal interrupts the whole process group, the
		// processes started here too, which may exit before this one
		// hears of it: that is no failure.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
			return fmt.Errorf("%s exited:\n%s", p.name, p.Output())
		}
	}
}
