// Package atomicfile writes output files so that no reader, and no job
// killed half-way, ever sees a partial one: the data goes to a hidden
// temporary file beside the target, which is renamed over it once complete.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Create opens a new hidden temporary file in path's directory.
func Create(path string) (*os.File, error) {
	return os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
}

// Commit gives a complete temporary file the mode of an ordinary output
// file (CreateTemp's 0600 is meant for secrets) and path as its name. The
// temporary file is removed if that fails.
func Commit(tmp *os.File, path string) error {
	err := tmp.Chmod(0o644)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Discard closes and removes a temporary file, if any.
func Discard(tmp *os.File) {
	if tmp != nil {
		tmp.Close()
		os.Remove(tmp.Name())
	}
}

// Write stores data at path atomically.
func Write(path string, data []byte) error {
	tmp, err := Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		Discard(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return Commit(tmp, path)
}
