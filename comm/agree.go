package comm

import "errors"

// ErrPeer is what Agree returns on a rank that did not fail itself when some
// other rank did.
var ErrPeer = errors.New("comm: another rank failed")

// Agree is a collective over c that tells every rank whether any rank passed
// a non-nil err: it returns nil on all ranks if none did; otherwise it
// returns err on the ranks that failed and ErrPeer on the others. Ranks use it
// to stop together and cleanly, without MPI_Abort, when some of them hit bad
// input.
func (c *Comm) Agree(err error) error {
	var failed int32
	if err != nil {
		failed = 1
	}
	anyFailed, aerr := AllreduceScalar(c, Max, failed)
	switch {
	case aerr != nil:
		return errors.Join(err, aerr)
	case anyFailed == 0:
		return nil
	case err != nil:
		return err
	default:
		return ErrPeer
	}
}
