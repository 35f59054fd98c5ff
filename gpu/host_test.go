package gpu

import (
	"errors"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/internal/cuda"
)

// These tests need no GPU: the NVRTC ones run wherever libnvrtc is found.

func needNVRTC(t *testing.T) *cuda.NVRTC {
	t.Helper()
	nv, err := cuda.LoadNVRTC()
	if errors.Is(err, ErrNoNVRTC) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return nv
}

// TestSpMVWidth pins the rule to the measurements it was fitted to
// (BenchmarkSpMVWidth on an H200): the fastest width per mean row length.
func TestSpMVWidth(t *testing.T) {
	for _, c := range []struct {
		perRow int
		p      backend.Precision
		want   int
	}{
		{4, backend.Double, 1}, {7, backend.Double, 1}, {7, backend.Single, 1},
		{12, backend.Double, 2}, {12, backend.Single, 1}, {24, backend.Double, 4}, {24, backend.Single, 2},
		{27, backend.Double, 4}, {27, backend.Single, 2}, {48, backend.Double, 8}, {48, backend.Single, 4},
		{96, backend.Double, 16}, {96, backend.Single, 8}, {192, backend.Single, 16}, {1000, backend.Double, 32},
	} {
		if got := spmvWidth(1000, 1000*c.perRow, c.p); got != c.want {
			t.Errorf("%d entries per row, %v: W=%d, want %d", c.perRow, c.p, got, c.want)
		}
	}
	if got := spmvWidth(0, 0, backend.Double); got != 1 {
		t.Errorf("empty matrix: W=%d", got)
	}
}

func TestDeviceFor(t *testing.T) {
	for _, c := range []struct {
		rank, count int
		share       bool
		want        int
		ok          bool
	}{
		{0, 1, false, 0, true}, {3, 4, false, 3, true}, {4, 4, false, 0, false},
		{5, 4, true, 1, true}, {0, 0, true, 0, false}, {-1, 2, true, 0, false},
	} {
		got, err := deviceFor(c.rank, c.count, c.share)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("deviceFor(%d, %d, %v) = %d, %v", c.rank, c.count, c.share, got, err)
		}
	}
}

// TestAvailable checks the answer without a driver (the message the CLI
// shows) and with one.
func TestAvailable(t *testing.T) {
	n, err := Available()
	if err != nil {
		if !errors.Is(err, ErrNoDriver) {
			t.Fatalf("Available: %v", err)
		}
		if !strings.Contains(err.Error(), "no CUDA driver: libcuda.so.1 not found") {
			t.Errorf("message %q", err)
		}
		if _, err := Open(0); !errors.Is(err, ErrNoDriver) {
			t.Errorf("Open without a driver: %v", err)
		}
		return
	}
	t.Logf("%d CUDA devices", n)
	if _, err := Open(n); err == nil {
		t.Errorf("Open(%d) of %d devices succeeded", n, n)
	}
}

// TestUsage checks the device memory count behind PeakBytes: the peak is
// the most held at once, frees of unknown addresses change nothing.
func TestUsage(t *testing.T) {
	var u usage
	u.add(0x1000, 100)
	u.add(0x2000, 50)
	u.remove(0x1000)
	u.add(0x3000, 80)
	u.remove(0x9000) // not allocated here: nothing to take back
	if u.inUse != 130 || u.peak != 150 {
		t.Errorf("in use %d, peak %d; want 130 and 150", u.inUse, u.peak)
	}
	u.remove(0x2000)
	u.remove(0x3000)
	if u.inUse != 0 || u.peak != 150 || len(u.sizes) != 0 {
		t.Errorf("after freeing all: in use %d, peak %d, %d sizes; want 0, 150, 0", u.inUse, u.peak, len(u.sizes))
	}
	var _ backend.MemoryReporter = (*Backend)(nil)
}
