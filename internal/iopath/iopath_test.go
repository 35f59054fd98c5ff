package iopath

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCheck: outputs that name an input or another output, through the same
// name, a symbolic link, a hard link or a linked directory, are refused and
// name both flags; directories, named pipes and unwritable directories are
// refused; a character device may be named twice; keep exempts an input.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	in := func(name string) string { return filepath.Join(dir, name) }
	for _, name := range []string{"A.mtx", "b.mtx"} {
		if err := os.WriteFile(in(name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.Symlink(in("A.mtx"), in("sym.mtx")))
	must(t, os.Link(in("A.mtx"), in("hard.mtx")))
	must(t, os.Mkdir(in("d"), 0o755))
	must(t, os.Symlink(in("d"), in("dlink")))
	must(t, syscall.Mkfifo(in("fifo"), 0o644))
	inputs := []Path{{"-matrix", in("A.mtx")}, {"-rhs", in("b.mtx")}, {"-x0", ""}}
	cases := []struct {
		outputs []Path
		keep    []string
		want    string // "" for none
	}{
		{[]Path{{"-out", in("x.mtx")}, {"-report", in("r.json")}}, nil, ""},
		{[]Path{{"-out", in("A.mtx")}}, nil, "flag -out: " + in("A.mtx") + " is the same file as -matrix"},
		{[]Path{{"-report", in("sym.mtx")}}, nil, "flag -report: " + in("sym.mtx") + " is the same file as -matrix"},
		{[]Path{{"-write-matrix", in("hard.mtx")}}, nil, "is the same file as -matrix"},
		{[]Path{{"-out", in("b.mtx")}}, nil, "is the same file as -rhs"},
		{[]Path{{"-out", in("b.mtx")}}, []string{"-rhs"}, ""},
		{[]Path{{"-out", in("s")}, {"-report", in("s")}}, nil, "flag -report: " + in("s") + " is the same file as -out"},
		{[]Path{{"-out", in("d/s")}, {"-report", in("dlink/s")}}, nil, "is the same file as -out"},
		{[]Path{{"-out", in("d")}}, nil, "flag -out: " + in("d") + " is a directory"},
		{[]Path{{"-out", in("fifo")}}, nil, "is a named pipe (FIFO)"},
		{[]Path{{"-out", in("none/x")}}, nil, "flag -out: cannot write beside"},
		{[]Path{{"-out", "/dev/null"}, {"-report", "/dev/null"}}, nil, ""},
	}
	for _, tc := range cases {
		err := Check(inputs, tc.outputs, tc.keep...)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("outputs %v: %v, want %q", tc.outputs, err, tc.want)
		}
	}
	if err := Check([]Path{{"-matrix", in("fifo")}}, nil); err == nil || !strings.Contains(err.Error(), "flag -matrix: "+in("fifo")+" is a named pipe (FIFO), not a regular file") {
		t.Errorf("named pipe as input: %v", err)
	}
	if _, err := OpenInput(in("fifo")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("OpenInput of a named pipe: %v", err)
	}
	if left, _ := filepath.Glob(in(".fsai-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
