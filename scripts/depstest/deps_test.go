// Package depstest checks the decisions of scripts/deps.sh with stand-ins
// for the commands it runs: what it installs, when it only says what is
// missing, and that it does not mistake a present NVRTC for a missing one.
package depstest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// machine describes the stand-in system deps.sh runs on.
type machine struct {
	root    bool
	sudo    bool
	mpirun  bool // also Open MPI's pkg-config file
	nvrtc   bool
	aptLogs bool // whether apt-get exists (it logs its arguments)
}

// run runs deps.sh with args on m and returns its exit status, its
// standard error and the apt-get calls, one a line.
func run(t *testing.T, m machine, args ...string) (int, string, string) {
	t.Helper()
	bin := t.TempDir()
	aptLog := filepath.Join(bin, "apt.log")
	uid := "1000"
	if m.root {
		uid = "0"
	}
	// ldconfig's cache listing is long: grep -q stops reading it early
	libs := strings.Repeat("\tlibfoo.so.1 (libc6,x86-64) => /usr/lib/libfoo.so.1\n", 20000)
	if m.nvrtc {
		libs = "\tlibnvrtc.so.11.2 (libc6,x86-64) => /usr/lib/libnvrtc.so.11.2\n" + libs
	}
	if err := os.WriteFile(filepath.Join(bin, "libs"), []byte(libs), 0o644); err != nil {
		t.Fatal(err)
	}
	scripts := map[string]string{
		"id":         "echo " + uid,
		"ldconfig":   "cat " + filepath.Join(bin, "libs"),
		"pkg-config": fmt.Sprintf("[ %v = true ]", m.mpirun),
		"gcc":        "true",
		"go":         "true",
		"dpkg":       "exit 1",
		"tee":        "cat >/dev/null",
	}
	if m.mpirun {
		scripts["mpirun"] = "true"
	}
	if m.sudo {
		scripts["sudo"] = `[ "$1" = -n ] && shift; "$@"`
	}
	if m.aptLogs {
		scripts["apt-get"] = "echo \"$*\" >>" + aptLog
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"grep", "env", "cat"} {
		path, err := exec.LookPath(name)
		if err != nil {
			t.Skip(err)
		}
		if err := os.Symlink(path, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(bash, append([]string{"../deps.sh"}, args...)...)
	cmd.Env = []string{"PATH=" + bin}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	apt, _ := os.ReadFile(aptLog)
	return code, stderr.String(), string(apt)
}

func TestDeps(t *testing.T) {
	// everything there, as for a cluster user with modules: nothing to do,
	// and a present NVRTC is found every time (grep -q under pipefail)
	for range 20 {
		if code, stderr, apt := run(t, machine{mpirun: true, nvrtc: true, aptLogs: true}, "--tests"); code != 0 || stderr != "" || apt != "" {
			t.Fatalf("all present: exit %d, stderr %q, apt-get %q", code, stderr, apt)
		}
	}
	// no NVRTC, no root or sudo: one line, and on (its tests skip)
	code, stderr, apt := run(t, machine{mpirun: true, aptLogs: true}, "--tests")
	if code != 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "optional libnvrtc11.2 missing") || apt != "" {
		t.Fatalf("no NVRTC, no sudo: exit %d, stderr %q, apt-get %q", code, stderr, apt)
	}
	// no Open MPI, no root or sudo: one line naming it, status 1
	code, stderr, apt = run(t, machine{aptLogs: true})
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "missing libopenmpi-dev openmpi-bin") || apt != "" {
		t.Fatalf("no Open MPI, no sudo: exit %d, stderr %q, apt-get %q", code, stderr, apt)
	}
	// root, no Open MPI, no NVRTC, for the demo: Open MPI only, waiting for
	// the package manager's lock
	code, stderr, apt = run(t, machine{root: true, aptLogs: true})
	if code != 0 || !strings.Contains(apt, "DPkg::Lock::Timeout=300 install -y -qq libopenmpi-dev openmpi-bin\n") || strings.Contains(apt, "nvrtc") {
		t.Fatalf("root, demo: exit %d, stderr %q, apt-get %q", code, stderr, apt)
	}
	// sudo, for the tests: NVRTC too
	code, stderr, apt = run(t, machine{sudo: true, mpirun: true, aptLogs: true}, "--tests")
	if code != 0 || !strings.Contains(apt, "install -y -qq libnvrtc11.2\n") {
		t.Fatalf("sudo, tests: exit %d, stderr %q, apt-get %q", code, stderr, apt)
	}
}
