package afsai

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// fakeDevice is a CPU backend that is also a FixedDevice: its FixedSetup
// returns twice FixedPattern's rows (exact in float32, and told apart from
// the CPU path's), or fails with err, and counts its calls.
type fakeDevice struct {
	*cpu.Backend
	err   error
	calls int
}

func (d *fakeDevice) FixedSetup(a *csr.Matrix[float32], rows []int, patterns [][]int32) (*csr.Matrix[float32], Stats, error) {
	d.calls++
	if d.err != nil {
		return nil, Stats{}, d.err
	}
	g, st, err := FixedPattern(a, rows, patterns)
	if err != nil {
		return nil, st, err
	}
	for k := range g.Val {
		g.Val[k] *= 2
	}
	return g, st, nil
}

// TestUpdateOnFixedDevice: Update computes on a backend that is a
// FixedDevice when the set-up is in single precision, and G gets the
// device's rows; it computes on the CPU for a double-precision set-up and
// when the device refuses the input as unsupported; other device errors
// fail the update.
func TestUpdateOnFixedDevice(t *testing.T) {
	for _, np := range []int{1, 2} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			A := generated(t, c, "poisson7:6")
			// updated returns G's values after an Update on be with the
			// set-up in precision setup, and the Update's error.
			updated := func(be backend.Backend, setup backend.Precision) ([]float64, error) {
				t.Helper()
				cfg := DefaultConfig()
				cfg.Setup = setup
				p, err := New(A, be, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Free()
				if err := NewUpdater(p, A, cfg).Update(); err != nil {
					return nil, err
				}
				return stripeOf(p.G.Matrix()).Val, nil
			}
			for _, setup := range []backend.Precision{backend.Single, backend.Double} {
				want, err := updated(cpu.New(1), setup)
				if err != nil {
					t.Fatal(err)
				}
				dev := &fakeDevice{Backend: cpu.New(1)}
				got, err := updated(dev, setup)
				if err != nil {
					t.Fatal(err)
				}
				if setup == backend.Double {
					if dev.calls != 0 || !slices.Equal(got, want) {
						t.Errorf("double-precision set-up: %d device calls, G equal to the CPU's: %v", dev.calls, slices.Equal(got, want))
					}
					continue
				}
				if dev.calls != 1 {
					t.Errorf("single-precision set-up: %d device calls, want 1", dev.calls)
				}
				for k := range want {
					if got[k] != 2*want[k] {
						t.Fatalf("entry %d of G is %g, not the device's %g", k, got[k], 2*want[k])
					}
				}

				dev = &fakeDevice{Backend: cpu.New(1), err: fmt.Errorf("fake: %w", ErrDeviceUnsupported)}
				got, err = updated(dev, setup)
				if err != nil {
					t.Fatalf("device refusing as unsupported: %v", err)
				}
				if dev.calls != 1 || !slices.Equal(got, want) {
					t.Errorf("device refusing as unsupported: %d calls, G equal to the CPU's: %v", dev.calls, slices.Equal(got, want))
				}

				failure := errors.New("fake: device failure")
				if _, err := updated(&fakeDevice{Backend: cpu.New(1), err: failure}, setup); !errors.Is(err, failure) {
					t.Errorf("device failure: Update returned %v", err)
				}
			}
		})
	}
}
