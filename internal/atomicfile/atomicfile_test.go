package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := Write(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "two" {
		t.Fatalf("read %q, %v", data, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", st.Mode())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	// a directory that does not exist: an error and nothing written
	if err := Write(filepath.Join(dir, "no", "x"), []byte("x")); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
	// a target that is a directory: the rename fails, the temporary goes
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "d"), []byte("x")); err == nil {
		t.Fatal("rename over a directory succeeded")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Fatalf("temporary files left after a failure: %v", left)
	}
}

// TestLongName: a target whose name is as long as a file name may be (255
// bytes on most file systems) gets a temporary file too.
func TestLongName(t *testing.T) {
	path := filepath.Join(t.TempDir(), strings.Repeat("x", 249))
	if err := Write(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "one" {
		t.Fatalf("read %q, %v", data, err)
	}
}

// TestDevice: a character device is written in place, never replaced by
// a rename, and its write errors are reported; a named pipe is refused.
func TestDevice(t *testing.T) {
	dir := t.TempDir()
	null, full := filepath.Join(dir, "null"), filepath.Join(dir, "full")
	for name, dev := range map[string]int{null: 3, full: 7} { // /dev/null is 1,3; /dev/full 1,7
		if err := syscall.Mknod(name, syscall.S_IFCHR|0o666, 1<<8|dev); err != nil {
			t.Skipf("mknod (needs root): %v", err)
		}
	}
	if err := Write(null, []byte("x")); err != nil {
		t.Fatalf("write to a copy of /dev/null: %v", err)
	}
	if err := Write(full, []byte("x")); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("write to a copy of /dev/full: %v", err)
	}
	for _, name := range []string{null, full} {
		if st, err := os.Stat(name); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%s is no longer a character device: %v %v", name, st.Mode(), err)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(fifo, []byte("x")); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Fatalf("write to a named pipe: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}
