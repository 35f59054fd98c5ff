package comm_test

import (
	"errors"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

func TestMain(m *testing.M) { mpitest.Main(m) }

// onRanks runs body on 1, 2, 3 and 4 ranks.
func onRanks(t *testing.T, body func(t *testing.T, c *comm.Comm)) {
	for np := 1; np <= 4; np++ {
		mpitest.Run(t, np, body)
	}
}

func TestWorld(t *testing.T) {
	onRanks(t, func(t *testing.T, c *comm.Comm) {
		if err := comm.Init(); err != nil || !comm.Initialized() {
			t.Errorf("second Init: %v, Initialized %v", err, comm.Initialized())
		}
		if err := c.Barrier(); err != nil {
			t.Fatal(err)
		}
		t.Run("NodeRank", func(t *testing.T) {
			rank, size, err := c.NodeRank()
			if err != nil {
				t.Fatal(err)
			}
			// All ranks run on this one node.
			if rank != c.Rank() || size != c.Size() {
				t.Errorf("NodeRank = %d, %d; want %d, %d", rank, size, c.Rank(), c.Size())
			}
		})
		t.Run("Agree", func(t *testing.T) {
			if err := c.Agree(nil); err != nil {
				t.Errorf("Agree(nil) on all ranks = %v", err)
			}
			mine := errors.New("bad input")
			var err error
			if c.Rank() == c.Size()-1 {
				err = mine
			}
			want := comm.ErrPeer
			if err != nil {
				want = mine
			}
			if got := c.Agree(err); got != want {
				t.Errorf("Agree with an error on the last rank only = %v, want %v", got, want)
			}
			if got := c.Agree(mine); got != mine {
				t.Errorf("Agree with an error on all ranks = %v, want %v", got, mine)
			}
		})
	})
}
