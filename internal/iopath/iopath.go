// Package iopath checks the files a command reads and writes before it does
// any work, so that no output destroys an input or another output, no input
// blocks the reader, and no long run ends in a file it cannot write.
//
// Files are compared by device and inode (os.SameFile), so two names of one
// file, through symbolic or hard links, are the same file. An output that
// does not exist yet is identified by its directory (also by device and
// inode) and its name.
package iopath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/fsai-dist/fsai-dist/internal/atomicfile"
)

// Path is a file that a flag names.
type Path struct {
	Flag string // the flag, with its dash: "-matrix"
	Name string // the path as given; "" when the flag is not set
}

// file is a checked path and what identifies it.
type file struct {
	Path
	info fs.FileInfo // the file's, or its directory's if it does not exist
	base string      // the name in that directory if it does not exist
}

// same reports whether f and g name one file.
func (f file) same(g file) bool {
	return f.base == g.base && os.SameFile(f.info, g.info)
}

// OpenInput opens a file to read, refusing anything but a regular file: a
// named pipe would block the reader, a directory or a device holds no
// matrix.
func OpenInput(path string) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("open %s: %s, not a regular file", path, atomicfile.Kind(fi.Mode()))
	}
	return os.Open(path)
}

// Check checks inputs and outputs before any work. An input must be a
// regular file (one that does not exist is left to its reader, whose
// message names it). An output must not be a directory, a named pipe, a
// socket or a block device; it must not be the same file as an input
// other than those in keep (their flags), nor as another output, unless it
// is a character device (/dev/null), which is written in place; and the
// directory of an output that is a regular file or does not exist must
// accept a new file (the temporary one). The error names the flags.
func Check(inputs, outputs []Path, keep ...string) error {
	var in []file
	for _, p := range inputs {
		if p.Name == "" {
			continue
		}
		fi, err := os.Stat(p.Name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return fmt.Errorf("flag %s: %w", p.Flag, err)
		case !fi.Mode().IsRegular():
			return fmt.Errorf("flag %s: %s is %s, not a regular file", p.Flag, p.Name, atomicfile.Kind(fi.Mode()))
		}
		in = append(in, file{Path: p, info: fi})
	}
	var out []file
	for _, p := range outputs {
		if p.Name == "" {
			continue
		}
		f, device, err := output(p)
		if err != nil {
			return err
		}
		if device {
			continue
		}
		for _, g := range in {
			if f.same(g) && !slices.Contains(keep, g.Flag) {
				return fmt.Errorf("flag %s: %s is the same file as %s %s: writing it would destroy the input", p.Flag, p.Name, g.Flag, g.Name)
			}
		}
		for _, g := range out {
			if f.same(g) {
				return fmt.Errorf("flag %s: %s is the same file as %s %s: one would overwrite the other", p.Flag, p.Name, g.Flag, g.Name)
			}
		}
		out = append(out, f)
	}
	return nil
}

// output identifies an output path and checks that it can be written;
// device reports a character device, written in place.
func output(p Path) (f file, device bool, err error) {
	f.Path = p
	fi, err := os.Stat(p.Name)
	switch {
	case err == nil && fi.Mode()&fs.ModeCharDevice != 0:
		return f, true, nil
	case err == nil && !fi.Mode().IsRegular():
		return f, false, fmt.Errorf("flag %s: %s is %s: name a file", p.Flag, p.Name, atomicfile.Kind(fi.Mode()))
	case err == nil:
		f.info = fi
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(p.Name)
		if f.info, err = os.Stat(dir); err != nil {
			return f, false, fmt.Errorf("flag %s: cannot write beside %s: %w", p.Flag, p.Name, err)
		}
		f.base = filepath.Base(p.Name)
	default:
		return f, false, fmt.Errorf("flag %s: %w", p.Flag, err)
	}
	tmp, err := atomicfile.Create(p.Name)
	if err != nil {
		return f, false, fmt.Errorf("flag %s: cannot write beside %s: %w", p.Flag, p.Name, err)
	}
	tmp.Discard()
	return f, false, nil
}
