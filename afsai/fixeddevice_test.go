package afsai

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/problem"
)

// fakeDevice is a CPU backend that is also a Device that declines all but
// PrepareFixed: its plans compute twice FixedPattern's rows (exact in
// float32, and told apart from the CPU path's), or PrepareFixed fails with
// err. It counts the calls.
type fakeDevice struct {
	*cpu.Backend
	err                       error
	prepares, computes, frees int
}

// errDeclined is fakeDevice's answer to all but PrepareFixed.
var errDeclined = fmt.Errorf("fake: rows on given patterns only: %w", ErrDeviceUnsupported)

func (d *fakeDevice) AdaptiveSetup(*csr.Matrix[float32], []int, Params) (*csr.Matrix[float32], Stats, KernelTimes, error) {
	return nil, Stats{}, KernelTimes{}, errDeclined
}

func (d *fakeDevice) AdaptiveFactor(Split, Params) (DeviceFactor, Stats, KernelTimes, error) {
	return DeviceFactor{}, Stats{}, KernelTimes{}, errDeclined
}

func (d *fakeDevice) StaticFactor(Split, StaticParams) (DeviceFactor, Stats, KernelTimes, error) {
	return DeviceFactor{}, Stats{}, KernelTimes{}, errDeclined
}

func (d *fakeDevice) StartRows(Split, []int32, int, Params) (RowsRun, []int32, Stats, KernelTimes, error) {
	return nil, nil, Stats{}, KernelTimes{}, errDeclined
}

func (d *fakeDevice) ReadMatrix(backend.Matrix) (*csr.Matrix[float64], []int32, error) {
	return nil, nil, errDeclined
}

func (d *fakeDevice) PrepareFixed(a *csr.Matrix[float32], rows []int, patterns [][]int32) (FixedPlan, error) {
	d.prepares++
	if d.err != nil {
		return nil, d.err
	}
	if _, err := CheckFixed(a, rows, patterns); err != nil {
		return nil, err
	}
	structure := *a
	structure.Val = nil
	return &fakePlan{d: d, a: &structure, rows: slices.Clone(rows), patterns: patterns}, nil
}

// fakePlan is a fakeDevice's plan: a's structure without its values.
type fakePlan struct {
	d        *fakeDevice
	a        *csr.Matrix[float32]
	rows     []int
	patterns [][]int32
}

func (p *fakePlan) Compute(vals []float32) (*csr.Matrix[float32], Stats, error) {
	p.d.computes++
	if len(vals) != p.a.NNZ() {
		return nil, Stats{}, fmt.Errorf("fake: %d values for %d entries", len(vals), p.a.NNZ())
	}
	a := *p.a
	a.Val = vals
	g, st, err := FixedPattern(&a, p.rows, p.patterns)
	if err != nil {
		return nil, st, err
	}
	for k := range g.Val {
		g.Val[k] *= 2
	}
	return g, st, nil
}

func (p *fakePlan) Free() { p.d.frees++ }

// Place refuses: a fakePlan computes its rows on the host only.
func (p *fakePlan) Place(maps [][]int32, pick []int32) error {
	return fmt.Errorf("fake: no placing: %w", ErrDeviceUnsupported)
}

func (p *fakePlan) ComputeOnDevice(vals []float32) (Stats, error) {
	return Stats{}, errors.New("fake: ComputeOnDevice without Place")
}

func (p *fakePlan) Store(blocks []backend.Matrix, picked []float32) error {
	return errors.New("fake: Store without Place")
}

// TestUpdateOnFixedDevice: Updates compute on the Device that the Config
// supplies when the set-up is in single precision, with one plan that
// the first Update prepares and every Update computes with on A's new
// values, and G gets the device's rows; Free frees the plan. They compute
// on the CPU for a double-precision set-up and when the device refuses the
// plan as unsupported (asked once); other device errors fail the update.
func TestUpdateOnFixedDevice(t *testing.T) {
	s := problem.Spec{Kind: "poisson7", N: 6}
	full, err := s.Generate(0, s.Rows())
	if err != nil {
		t.Fatal(err)
	}
	for _, np := range []int{1, 2} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			A := generated(t, c, "poisson7:6")
			lo, hi := A.Part.Range(c.Rank())
			// updated returns G's values after each of two Updates on be,
			// with the set-up in precision setup and A = D A0 D for a new D
			// before each, with dev as the Device (none: nil), and the error
			// of the first that fails.
			updated := func(be backend.Backend, dev Device, setup backend.Precision) ([][]float64, error) {
				t.Helper()
				if err := A.SetValues(cut(full, lo, hi)); err != nil {
					t.Fatal(err)
				}
				cfg := DefaultConfig()
				cfg.Setup = setup
				cfg.Device = dev
				p, err := New(A, be, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Free()
				u := NewUpdater(p, A, cfg)
				defer u.Free()
				var vals [][]float64
				for round := range 2 {
					d := func(i int64) float64 { return 1.5 + 0.4*math.Sin(float64(i)+float64(round)) }
					if err := A.SetValues(cut(scaled(full, d), lo, hi)); err != nil {
						t.Fatal(err)
					}
					if err := u.Update(); err != nil {
						return nil, err
					}
					vals = append(vals, p.G.Matrix().Rows().Val)
				}
				return vals, nil
			}
			for _, setup := range []backend.Precision{backend.Single, backend.Double} {
				want, err := updated(cpu.New(1), nil, setup)
				if err != nil {
					t.Fatal(err)
				}
				if slices.Equal(want[0], want[1]) {
					t.Fatal("the two rounds give the same G")
				}
				dev := &fakeDevice{Backend: cpu.New(1)}
				got, err := updated(dev, dev, setup)
				if err != nil {
					t.Fatal(err)
				}
				if setup == backend.Double {
					if dev.prepares != 0 || !slices.EqualFunc(got, want, slices.Equal) {
						t.Errorf("double-precision set-up: %d plans, G equal to the CPU's: %v", dev.prepares,
							slices.EqualFunc(got, want, slices.Equal))
					}
					continue
				}
				if dev.prepares != 1 || dev.computes != 2 || dev.frees != 1 {
					t.Errorf("single-precision set-up: %d plans prepared, %d computes, %d freed; want 1, 2, 1",
						dev.prepares, dev.computes, dev.frees)
				}
				for round := range want {
					for k := range want[round] {
						if got[round][k] != 2*want[round][k] {
							t.Fatalf("round %d: entry %d of G is %g, not the device's %g", round, k, got[round][k], 2*want[round][k])
						}
					}
				}

				dev = &fakeDevice{Backend: cpu.New(1), err: fmt.Errorf("fake: %w", ErrDeviceUnsupported)}
				got, err = updated(dev, dev, setup)
				if err != nil {
					t.Fatalf("device refusing as unsupported: %v", err)
				}
				if dev.prepares != 1 || dev.computes != 0 || !slices.EqualFunc(got, want, slices.Equal) {
					t.Errorf("device refusing as unsupported: %d plans, %d computes, G equal to the CPU's: %v",
						dev.prepares, dev.computes, slices.EqualFunc(got, want, slices.Equal))
				}

				failure := errors.New("fake: device failure")
				dev = &fakeDevice{Backend: cpu.New(1), err: failure}
				if _, err := updated(dev, dev, setup); !errors.Is(err, failure) {
					t.Errorf("device failure: Update returned %v", err)
				}
			}
		})
	}
}
