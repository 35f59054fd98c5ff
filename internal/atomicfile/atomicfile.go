// Package atomicfile writes output files so that no reader, and no job
// killed half-way, ever sees a partial one: the data goes to a hidden
// temporary file beside the target, which is renamed over it once complete.
// A target that exists and is a character device (/dev/null, a terminal) is
// written in place instead: a rename would replace the device node with a
// regular file.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// tempPattern names the temporary files: short, so that a target whose
// name is as long as the file system allows still gets one.
const tempPattern = ".fsai-*"

// File is an output being written: a temporary file, or the target itself
// when it is written in place.
type File struct {
	*os.File
	target  string
	inPlace bool
}

// InPlace reports whether the target itself is being written.
func (f *File) InPlace() bool { return f.inPlace }

// Create opens path's output: a new hidden temporary file in path's
// directory, or path itself if it is a character device. A path that is a
// directory, a named pipe, a socket or a block device is refused (Kind
// says why).
func Create(path string) (*File, error) {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.Mode()&fs.ModeCharDevice != 0:
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &File{File: f, target: path, inPlace: true}, nil
	case err == nil && !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is %s: want a regular file or a character device", path, Kind(fi.Mode()))
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), tempPattern)
	if err != nil {
		return nil, err
	}
	return &File{File: f, target: path}, nil
}

// Kind names the type of a file that is not regular, for messages.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}

// Commit completes the output: a temporary file gets the mode of an
// ordinary output file (CreateTemp's 0600 is meant for secrets) and the
// target's name; a target written in place is closed. The temporary file
// is removed if that fails.
func (f *File) Commit() error {
	var err error
	if !f.inPlace {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && !f.inPlace {
		err = os.Rename(f.Name(), f.target)
	}
	if err != nil {
		if !f.inPlace {
			os.Remove(f.Name())
		}
		return fmt.Errorf("write %s: %w", f.target, err)
	}
	return nil
}

// Discard closes an output that will not be completed and removes its
// temporary file; a nil f is ignored.
func (f *File) Discard() {
	if f == nil {
		return
	}
	f.Close()
	if !f.inPlace {
		os.Remove(f.Name())
	}
}

// Write stores data at path atomically (in place for a character device).
func Write(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Discard()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}
