package main

import (
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// stopSignals end a run early but cleanly: SLURM sends SIGTERM at the time
// limit (and KillWait seconds later SIGKILL), a user at a terminal SIGINT.
var stopSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT}

// interrupt records that a stop signal arrived.
type interrupt struct{ got atomic.Bool }

// catchSignals makes the first SIGTERM or SIGINT set the flag that
// requested reports, instead of ending the process; a second one ends it as
// usual. It must be called after MPI_Init, so that Go's handler is the one
// installed.
func catchSignals() *interrupt {
	// a launcher that closes the ranks' output must not end them with
	// SIGPIPE: their writes to it fail instead
	signal.Ignore(syscall.SIGPIPE)
	in := new(interrupt)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals...)
	go func() {
		<-ch
		in.got.Store(true)
		signal.Reset(stopSignals...)
	}()
	return in
}

// requested reports whether a stop signal has arrived: PCG's Stop.
func (in *interrupt) requested() bool { return in.got.Load() }
