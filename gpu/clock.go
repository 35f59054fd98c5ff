package gpu

import "github.com/fsai-dist/fsai-dist/backend"

// Mark records a CUDA event on the backend's stream (backend.Clock). The
// events are kept for reuse once Seconds has read them.
func (b *Backend) Mark() (backend.Mark, error) {
	defer b.enter()()
	if b.err != nil {
		return 0, b.err
	}
	var e uintptr
	if n := len(b.marks); n > 0 {
		e, b.marks = b.marks[n-1], b.marks[:n-1]
	} else {
		var err error
		if e, err = b.drv.EventCreate(0, "mark"); err != nil {
			b.fail(err)
			return 0, err
		}
	}
	if err := b.drv.EventRecord(e, b.stream, "mark"); err != nil {
		b.fail(err)
		return 0, err
	}
	return backend.Mark(e), nil
}

// Seconds waits for the event to and returns the device time from from to
// to (backend.Clock); both events go back to the pool.
func (b *Backend) Seconds(from, to backend.Mark) (float64, error) {
	defer b.enter()()
	b.marks = append(b.marks, uintptr(from), uintptr(to))
	if b.err != nil {
		return 0, b.err
	}
	if err := b.drv.EventSynchronize(uintptr(to), "mark"); err != nil {
		b.fail(err)
		return 0, err
	}
	ms, err := b.drv.EventElapsed(uintptr(from), uintptr(to))
	if err != nil {
		b.fail(err)
		return 0, err
	}
	return float64(ms) / 1e3, nil
}
