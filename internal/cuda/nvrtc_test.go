package cuda

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// These tests need no GPU: they run wherever libnvrtc is found.

func needNVRTC(t *testing.T) *NVRTC {
	t.Helper()
	nv, err := LoadNVRTC()
	if errors.Is(err, ErrNoNVRTC) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return nv
}

const tinyKernel = `extern "C" __global__ void twice(double *x) { x[threadIdx.x] *= 2; }`

// TestImageCache checks that Image compiles machine code, stores it in the
// cache directory, and reads it back when the in-process memo is empty.
func TestImageCache(t *testing.T) {
	nv := needNVRTC(t)
	const cc = 90
	want, err := nv.TargetFor(cc)
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	t.Cleanup(ForgetImages) // the memo ends up holding a damaged image
	img, tg, cached, err := Image(tinyKernel, "tiny.cu", cc, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if tg != want || cached {
		t.Errorf("first image: target %v cached %v, want %v and false", tg, cached, want)
	}
	if want.Cubin && !bytes.HasPrefix(img, []byte("\x7fELF")) {
		t.Errorf("cubin does not start with an ELF header: % x", img[:4])
	}
	files, _ := filepath.Glob(filepath.Join(dir, "kernels-*.bin"))
	if len(files) != 1 || files[0] != CachePath(dir, tinyKernel, tg, nv.Version()) {
		t.Fatalf("cache holds %v, want one image at CachePath", files)
	}
	ForgetImages()
	again, _, cached, err := Image(tinyKernel, "tiny.cu", cc, dir, false)
	if err != nil || !cached || !bytes.Equal(again, img) {
		t.Errorf("second image: cached %v, equal %v, err %v", cached, bytes.Equal(again, img), err)
	}
	if err := os.WriteFile(files[0], []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	ForgetImages()
	if bad, _, _, _ := Image(tinyKernel, "tiny.cu", cc, dir, false); string(bad) != "damaged" {
		t.Errorf("Image did not read the cache file")
	}
}

func TestCompileErrorCarriesLog(t *testing.T) {
	nv := needNVRTC(t)
	_, err := nv.Compile(`extern "C" __global__ void k(double *x) { x[0] = undefined_name; }`,
		"bad.cu", Target{Arch: 80})
	if err == nil || !strings.Contains(err.Error(), "undefined_name") || !strings.Contains(err.Error(), "bad.cu") {
		t.Errorf("error %v does not carry the compiler log", err)
	}
}

func TestTargetFor(t *testing.T) {
	n := &NVRTC{archs: []int{50, 60, 70, 75, 80, 86, 90}}
	for _, c := range []struct {
		cc   int
		want string
	}{{90, "sm_90"}, {86, "sm_86"}, {89, "compute_86"}, {100, "compute_90"}, {75, "sm_75"}} {
		got, err := n.TargetFor(c.cc)
		if err != nil || got.String() != c.want {
			t.Errorf("TargetFor(%d) = %v, %v; want %s", c.cc, got, err, c.want)
		}
	}
	if _, err := n.TargetFor(35); err == nil {
		t.Error("TargetFor(35) accepted a device older than NVRTC supports")
	}
	if got, _ := (&NVRTC{}).TargetFor(90); got.String() != "compute_90" {
		t.Errorf("without a list of architectures: %v, want compute_90", got)
	}
}

// TestNoDriver checks the error without a driver (the message the CLI
// shows); with one, Load must succeed.
func TestNoDriver(t *testing.T) {
	_, err := Load()
	if err == nil {
		return
	}
	if !errors.Is(err, ErrNoDriver) || !strings.Contains(err.Error(), "no CUDA driver: libcuda.so.1 not found") {
		t.Errorf("Load: %v", err)
	}
}
