package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
)

// The compiled kernels are cached on disk, so that only the first process
// on a machine (or after a change of source, GPU or NVRTC) pays for NVRTC,
// which takes seconds. Cache errors are ignored: the cache only saves time.

// CacheDir is where compiled kernels are kept: $XDG_CACHE_HOME/fsai-dist or
// ~/.cache/fsai-dist. Empty when there is no such place.
func CacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "fsai-dist")
}

// cacheKey names a compiled image by everything it depends on.
func cacheKey(src string, t Target, nvrtcVersion string) string {
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

// images memoizes compiled modules by cache key within the process.
var images struct {
	sync.Mutex
	m map[string][]byte
}

// Image returns src compiled for compute capability cc (times ten): from
// memory, from the disk cache in dir, or from NVRTC (name names the source
// in compiler messages); fresh skips both caches and replaces their
// entries. cached reports that the image was not compiled by this call.
func Image(src, name string, cc int, dir string, fresh bool) (image []byte, t Target, cached bool, err error) {
	nv, err := LoadNVRTC()
	if err != nil {
		return nil, t, false, err
	}
	if t, err = nv.TargetFor(cc); err != nil {
		return nil, t, false, err
	}
	key := cacheKey(src, t, nv.Version())
	images.Lock()
	defer images.Unlock()
	if !fresh {
		if image = images.m[key]; image == nil {
			image = readCache(dir, key)
		}
	}
	if image != nil {
		cached = true
	} else {
		if image, err = nv.Compile(src, name, t); err != nil {
			return nil, t, false, err
		}
		writeCache(dir, key, image)
	}
	if images.m == nil {
		images.m = make(map[string][]byte)
	}
	images.m[key] = image
	return image, t, cached, nil
}

// CachePath is the file in dir that holds src compiled for t by NVRTC of
// version nvrtcVersion.
func CachePath(dir, src string, t Target, nvrtcVersion string) string {
	return cachePath(dir, cacheKey(src, t, nvrtcVersion))
}

// ForgetImages empties the in-process memo of compiled modules, so that the
// next Image reads the disk cache again.
func ForgetImages() {
	images.Lock()
	images.m = nil
	images.Unlock()
}
