package gpu

import (
	"testing"
	"time"
)

// TestClock: marks around queued work give its device time, no more than
// the host waited for it and more than nothing; the events go back to a
// pool that the next marks reuse.
func TestClock(t *testing.T) {
	b := openGPU(t)
	x, err := b.NewVector(1 << 26)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	for round := range 2 {
		start := time.Now()
		from, err := b.Mark()
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			b.Fill(x, float64(round))
		}
		to, err := b.Mark()
		if err != nil {
			t.Fatal(err)
		}
		s, err := b.Seconds(from, to)
		wall := time.Since(start).Seconds()
		if err != nil || !(s > 0) || s > wall {
			t.Fatalf("round %d: %g s on the device, %g s on the host: %v", round, s, wall, err)
		}
		if len(b.marks) != 2 {
			t.Fatalf("round %d: %d events in the pool, want 2", round, len(b.marks))
		}
		t.Logf("20 fills of 512 MiB: %.3g s on the device, %.3g s on the host", s, wall)
	}
}
