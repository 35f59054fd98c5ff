package dsmat

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
)

// haloTag marks the messages of an SpMV. Every Apply completes all of its
// messages before it returns, so one tag serves every operator.
const haloTag = 17

// Operator is a Matrix bound to a backend: its blocks live on the device, and
// the buffers of the halo exchange are allocated once. Apply is the
// distributed SpMV with the overlap of the blueprint, section 4.2.
type Operator struct {
	m  *Matrix
	be backend.Backend

	diag backend.Matrix
	off  []haloBlock

	sendIdx  backend.Index        // all send lists, concatenated
	sendDev  backend.Vector       // packed values on the device
	sendBuf  *comm.Buf[float64]   // the same on the host, for MPI
	sends    []*comm.Buf[float64] // views of sendBuf, one per Send
	recvBuf  *comm.Buf[float64]   // all halos on the host
	haloDev  backend.Vector       // all halos on the device
	unpin    []func()
	reqs     []*comm.Request // receives first, then sends
	schedule Schedule
}

// haloBlock is an off-diagonal block on the device with the slices of the
// receive buffers that feed it.
type haloBlock struct {
	a    backend.Matrix
	recv *comm.Buf[float64]
	halo backend.Vector
}

// Bind uploads the matrix to be (values stored in precision p) and allocates
// the halo buffers. Free releases them.
func (m *Matrix) Bind(be backend.Backend, p backend.Precision) (*Operator, error) {
	op := &Operator{m: m, be: be}
	if err := op.alloc(p); err != nil {
		op.Free()
		return nil, fmt.Errorf("dsmat: bind matrix to %s: %w", be.Name(), err)
	}
	return op, nil
}

func (op *Operator) alloc(p backend.Precision) error {
	var err error
	m, be := op.m, op.be
	if op.diag, err = be.NewMatrix(m.Diag, nil, p); err != nil {
		return err
	}

	nrecv := 0
	for _, b := range m.Off {
		nrecv += len(b.Cols)
	}
	op.recvBuf = comm.NewBuf[float64](nrecv)
	if op.haloDev, err = be.NewVector(nrecv); err != nil {
		return err
	}
	off := 0
	for _, b := range m.Off {
		a, err := be.NewMatrix(b.A, b.Rows, p)
		if err != nil {
			return err
		}
		n := len(b.Cols)
		op.off = append(op.off, haloBlock{a: a, recv: op.recvBuf.Slice(off, n), halo: op.haloDev.Slice(off, n)})
		off += n
	}

	var idx []int32
	for _, s := range m.Sends {
		idx = append(idx, s.Idx...)
	}
	if op.sendIdx, err = be.NewIndex(idx); err != nil {
		return err
	}
	if op.sendDev, err = be.NewVector(len(idx)); err != nil {
		return err
	}
	op.sendBuf = comm.NewBuf[float64](len(idx))
	off = 0
	for _, s := range m.Sends {
		op.sends = append(op.sends, op.sendBuf.Slice(off, len(s.Idx)))
		off += len(s.Idx)
	}
	for _, host := range [][]float64{op.sendBuf.Data, op.recvBuf.Data} {
		if len(host) == 0 {
			continue
		}
		unpin, err := be.Pin(host)
		if err != nil {
			return err
		}
		op.unpin = append(op.unpin, unpin)
	}
	op.reqs = make([]*comm.Request, len(op.off)+len(op.sends))
	return nil
}

// Schedule orders the communication and computation of an SpMV. Only
// benchmarks change it: Sequential and LocalOnly exist to measure how much of
// the halo exchange the overlap hides.
type Schedule int

const (
	// Overlap is the blueprint's: the diagonal product runs while the
	// halos travel, and each off-diagonal block starts as its halo lands.
	Overlap Schedule = iota
	// Sequential exchanges every halo first, then computes.
	Sequential
	// LocalOnly skips the exchange (the products use stale halos): the
	// time of the computation alone. Its results are wrong.
	LocalOnly
)

// SetSchedule changes how Apply orders its work.
func (op *Operator) SetSchedule(s Schedule) { op.schedule = s }

// Apply computes y = A*x on this rank's rows; x and y are the rank's parts of
// distributed vectors on the backend. It is collective over the matrix's
// communicator.
//
// The steps overlap communication with computation: the entries neighbours
// need are packed and sent, the diagonal block's product runs (on a GPU it
// is queued and runs while the host waits for messages), and each
// off-diagonal block is applied as soon as its neighbour's halo arrives.
func (op *Operator) Apply(y, x backend.Vector) error {
	be := op.be
	if op.schedule == LocalOnly {
		be.SpMV(y, op.diag, x, 0)
		for _, b := range op.off {
			be.SpMV(y, b.a, b.halo, 1)
		}
		return be.Err()
	}
	if err := op.post(x); err != nil {
		return err
	}
	recvs := op.reqs[:len(op.off)]
	if op.schedule == Sequential {
		if err := comm.Waitall(recvs); err != nil {
			return fmt.Errorf("dsmat: spmv halo: %w", err)
		}
		be.SpMV(y, op.diag, x, 0)
		for _, b := range op.off {
			be.Upload(b.halo, b.recv.Data)
			be.SpMV(y, b.a, b.halo, 1)
		}
	} else {
		be.SpMV(y, op.diag, x, 0)
		for range op.off {
			k, err := comm.Waitany(recvs)
			if err != nil {
				return fmt.Errorf("dsmat: spmv halo: %w", err)
			}
			b := op.off[k]
			be.Upload(b.halo, b.recv.Data)
			be.SpMV(y, b.a, b.halo, 1)
		}
	}
	if err := comm.Waitall(op.reqs[len(op.off):]); err != nil {
		return fmt.Errorf("dsmat: spmv send: %w", err)
	}
	return be.Err()
}

// post packs the entries neighbours need and posts every receive and send.
func (op *Operator) post(x backend.Vector) error {
	be, c := op.be, op.m.Comm
	if len(op.sends) > 0 {
		be.Gather(op.sendDev, x, op.sendIdx)
		if err := be.Download(op.sendBuf.Data, op.sendDev); err != nil {
			return fmt.Errorf("dsmat: spmv pack: %w", err)
		}
	}
	var err error
	for k, b := range op.off {
		if op.reqs[k], err = comm.Irecv(c, b.recv, op.m.Off[k].Rank, haloTag); err != nil {
			return fmt.Errorf("dsmat: spmv receive: %w", err)
		}
	}
	for k, buf := range op.sends {
		if op.reqs[len(op.off)+k], err = comm.Isend(c, buf, op.m.Sends[k].Rank, haloTag); err != nil {
			return fmt.Errorf("dsmat: spmv send: %w", err)
		}
	}
	return nil
}

// Backend returns the backend the operator computes on.
func (op *Operator) Backend() backend.Backend { return op.be }

// Matrix returns the matrix the operator applies.
func (op *Operator) Matrix() *Matrix { return op.m }

// Free releases the device memory and host buffers of the operator.
func (op *Operator) Free() {
	for _, unpin := range op.unpin {
		unpin()
	}
	op.unpin = nil
	for _, b := range op.off {
		b.a.Free()
	}
	op.off = nil
	for _, x := range []interface{ Free() }{op.diag, op.sendIdx, op.sendDev, op.haloDev} {
		if x != nil {
			x.Free()
		}
	}
	for _, buf := range []*comm.Buf[float64]{op.sendBuf, op.recvBuf} {
		if buf != nil {
			buf.Free()
		}
	}
}
