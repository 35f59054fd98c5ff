package mpitest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
)

func TestMain(m *testing.M) { Main(m) }

func TestRunPattern(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"TestX/np2", "^TestX$/^np2$"},
		{"TestX/a.b(c)/np4", `^TestX$/^a\.b\(c\)$/^np4$`},
		{"TestX/np2#01", "^TestX$/^np2#01$"},
	} {
		if got := runPattern(tc.name); got != tc.want {
			t.Errorf("runPattern(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRun checks that the body runs once on each of np distinct ranks.
func TestRun(t *testing.T) {
	for np := 1; np <= 3; np++ {
		Run(t, np, func(t *testing.T, c *comm.Comm) {
			seen := make([]int32, np)
			seen[c.Rank()] = 1
			if err := comm.Allreduce(c, comm.Sum, seen); err != nil {
				t.Fatal(err)
			}
			for r, n := range seen {
				if n != 1 {
					t.Errorf("rank %d ran the body %d times", r, n)
				}
			}
		})
	}
}

// selftestEnv makes TestFailingRank run its failing body.
const selftestEnv = "FSAI_MPITEST_SELFTEST"

// TestFailingRank checks that a rank that fails or panics while its peer
// waits for it in a barrier fails the test with its message, without hanging:
// it runs this test binary with selftestEnv set, in which case the test does
// just that on two ranks.
func TestFailingRank(t *testing.T) {
	if mode := os.Getenv(selftestEnv); mode != "" {
		Run(t, 2, func(t *testing.T, c *comm.Comm) {
			if c.Rank() == 1 {
				if mode == "panic" {
					panic("rank 1 panics on purpose")
				}
				t.Fatal("rank 1 fails on purpose")
			}
			if err := c.Barrier(); err != nil {
				t.Error(err)
			}
		})
		return
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not on PATH")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"fatal", "panic"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(self, "-test.run", "^TestFailingRank$", "-test.count=1", "-test.timeout=60s")
			cmd.Env = append(os.Environ(), selftestEnv+"="+mode)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the failing test passed; output:\n%s", out)
			}
			if !strings.Contains(string(out), "rank 1 ") || !strings.Contains(string(out), " on purpose") {
				t.Errorf("the output lacks the failing rank's message:\n%s", out)
			}
			if strings.Contains(string(out), "timed out") {
				t.Errorf("the failing test hung:\n%s", out)
			}
		})
	}
}
