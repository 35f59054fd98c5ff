// Package mpitest runs Go tests on several MPI ranks. A test calls Run with a
// rank count; outside mpirun, Run re-runs the test binary under
// `mpirun -np N` restricted to that one subtest and fails with the ranks'
// output if any rank fails; inside, each rank runs the test body. Packages
// with such tests use Main as their TestMain.
package mpitest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsai-dist/fsai-dist/comm"
)

// childEnv marks the processes that mpirun starts.
const childEnv = "FSAI_MPITEST_CHILD"

// timeout bounds one mpirun, so that a hung rank fails the test instead of
// hanging CI.
const timeout = 2 * time.Minute

// mpiEnv is what the ranks need in containers run as root on few cores.
var mpiEnv = []string{
	"OMPI_ALLOW_RUN_AS_ROOT=1",
	"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
	"OMPI_MCA_btl_vader_single_copy_mechanism=none", // containers refuse CMA
	"OMPI_MCA_rmaps_base_oversubscribe=1",
	childEnv + "=1",
}

// Run runs body on np ranks as subtest "npN": outside mpirun it re-runs the
// test binary under `mpirun -np N --oversubscribe` restricted to that subtest
// and fails with the ranks' output if any rank fails; inside the child it
// initializes MPI and calls body(t, comm.World()). It skips if mpirun is not
// on PATH.
//
// A rank whose body fails leaves the others to mpirun, which ends them all,
// so body may fail on some ranks only; checks of values should still use
// t.Error rather than t.Fatal, so that all ranks go on making the same calls
// and report all they find.
func Run(t *testing.T, np int, body func(t *testing.T, c *comm.Comm)) {
	t.Helper()
	t.Run(fmt.Sprintf("np%d", np), func(t *testing.T) {
		if os.Getenv(childEnv) == "" {
			launch(t, np)
			return
		}
		if err := comm.Init(); err != nil {
			t.Fatal(err)
		}
		c := comm.World()
		if c.Size() != np {
			t.Fatalf("mpitest: %d ranks, want %d", c.Size(), np)
		}
		body(t, c)
	})
}

// CheckCollectiveError checks that every rank got an error, that at least
// one rank's error names the problem (want) and that the others say a peer
// failed (comm.ErrPeer), as a collective call that fails on some ranks must
// end. Every rank must call it: it makes one reduction.
func CheckCollectiveError(t *testing.T, c *comm.Comm, name string, err error, want string) {
	t.Helper()
	found := int64(0)
	switch {
	case err == nil:
		t.Errorf("%s: no error, want %q", name, want)
	case strings.Contains(err.Error(), want):
		found = 1
	case !errors.Is(err, comm.ErrPeer):
		t.Errorf("%s: err = %v, want %q or comm.ErrPeer", name, err, want)
	}
	if n, aerr := comm.AllreduceScalar(c, comm.Sum, found); aerr != nil || n == 0 {
		t.Errorf("%s: no rank reported %q (this rank: %v)", name, want, err)
	}
}

// Main runs the tests and exits. In a rank whose tests passed it finalizes
// MPI first. A rank whose tests failed exits at once without MPI_Finalize,
// which would wait for peers that may be blocked in a call the failing rank
// left; mpirun then ends them.
func Main(m *testing.M) {
	code := m.Run()
	if code == 0 && comm.Initialized() {
		if err := comm.Finalize(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// launch runs the test t on np ranks under mpirun and fails t if that fails.
func launch(t *testing.T, np int) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpitest: mpirun not on PATH")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("mpitest: %v", err)
	}
	args := []string{"-np", strconv.Itoa(np), "--oversubscribe", "--bind-to", "none", "--tag-output",
		self, "-test.run", runPattern(t.Name()), "-test.v", "-test.count=1"}
	if f := flag.Lookup("test.timeout"); f != nil && f.Value.String() != "0s" {
		args = append(args, "-test.timeout="+f.Value.String())
	}

	limit := timeout
	if d, ok := t.Deadline(); ok {
		// Leave time to end mpirun and fail with the ranks' output before
		// the test binary's own timeout panics.
		limit = min(limit, time.Until(d)*3/4)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, mpirun, args...)
	cmd.Env = append(os.Environ(), mpiEnv...)
	// mpirun ends its ranks on SIGTERM, not on SIGKILL: send SIGTERM on
	// timeout, and when this process dies first.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	out, err := cmd.CombinedOutput()
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatalf("mpitest: %s %s: timed out after %v; output:\n%s", mpirun, strings.Join(args, " "), limit, out)
	}
	if err != nil {
		t.Fatalf("mpitest: %s %s: %v; output:\n%s", mpirun, strings.Join(args, " "), err, out)
	}
}

// runPattern returns the -test.run pattern that selects exactly the test
// named name ("TestX/np2").
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}
