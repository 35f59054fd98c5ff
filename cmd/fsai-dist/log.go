package main

import (
	"encoding/json"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/fsai-dist/fsai-dist/comm"
)

// stderr is where the messages and the log go: standard error, through a
// queue once run has started one.
var stderr io.Writer = os.Stderr

// newLogger logs to stderr with the rank in every line. Only rank 0 logs
// unless verbose is set: 512 ranks printing progress help nobody.
func newLogger(c *comm.Comm, verbose bool) *zap.Logger {
	if c.Rank() != 0 && !verbose {
		return zap.NewNop()
	}
	cfg := zap.NewDevelopmentEncoderConfig()
	cfg.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05.000")
	cfg.EncodeCaller = nil
	cfg.CallerKey = ""
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(cfg), zapcore.Lock(zapcore.AddSync(stderr)), zap.InfoLevel)
	return zap.New(core).With(zap.Int("rank", c.Rank()))
}

// relres is a relative residual for the log, in scientific notation with
// four significant digits ("relres": 9.215e-09): zap writes a float64
// field in fixed-point notation, which spells such a number with 26 digits.
func relres(v float64) zap.Field {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return zap.Float64("relres", v) // "NaN", "+Inf": not JSON numbers
	}
	return zap.Reflect("relres", json.Number(strconv.FormatFloat(v, 'e', 3, 64)))
}

// queue passes writes on to w from a goroutine, so that the writer never
// waits on w: Open MPI's mpirun stops reading the ranks' output once it is
// signalled, and a rank whose write to a full pipe blocked would then
// never reach the end of its iteration to save the iterate before mpirun's
// SIGKILL. Writes beyond the queue's room are dropped.
type queue struct {
	lines   chan []byte
	done    chan struct{}
	dropped atomic.Int64
}

// queueLines is the room of a queue, in writes (log lines).
const queueLines = 4096

func newQueue(w io.Writer) *queue {
	q := &queue{lines: make(chan []byte, queueLines), done: make(chan struct{})}
	go func() {
		for p := range q.lines {
			w.Write(p)
		}
		close(q.done)
	}()
	return q
}

// Write queues a copy of p, or drops it when the queue is full.
func (q *queue) Write(p []byte) (int, error) {
	select {
	case q.lines <- slices.Clone(p):
	default:
		q.dropped.Add(1)
	}
	return len(p), nil
}

// close waits up to limit for the queued writes to reach w; no more may
// follow.
func (q *queue) close(limit time.Duration) {
	close(q.lines)
	select {
	case <-q.done:
	case <-time.After(limit):
	}
}
