package gpu

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// The compiled kernels are cached on disk, so that only the first process
// on a machine (or after a change of source, GPU or NVRTC) pays for NVRTC,
// which takes seconds. Cache errors are ignored: the cache only saves time.

// cacheDir is where compiled kernels are kept: $XDG_CACHE_HOME/fsai-dist or
// ~/.cache/fsai-dist. Empty when there is no such place.
func cacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "fsai-dist")
}

// cacheKey names a compiled image by everything it depends on.
func cacheKey(src string, t target, nvrtcVersion string) string {
	h := sha256.New()
	for _, s := range []string{src, t.String(), nvrtcVersion} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func cachePath(dir, key string) string {
	return filepath.Join(dir, "kernels-"+key[:32]+".bin")
}

// readCache returns the cached image for key, or nil.
func readCache(dir, key string) []byte {
	if dir == "" {
		return nil
	}
	data, err := os.ReadFile(cachePath(dir, key))
	if err != nil || len(data) == 0 {
		return nil
	}
	return data
}

// writeCache stores image under key atomically: readers in other processes
// see the whole file or none.
func writeCache(dir, key string, image []byte) {
	if dir == "" || os.MkdirAll(dir, 0o755) != nil {
		return
	}
	f, err := os.CreateTemp(dir, ".kernels-*")
	if err != nil {
		return
	}
	_, werr := f.Write(image)
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), cachePath(dir, key)) != nil {
		os.Remove(f.Name())
	}
}
