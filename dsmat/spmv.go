package dsmat

import (
	"fmt"
	"sync/atomic"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Operator is a Matrix bound to a backend: its blocks live on the device, and
// the buffers of the halo exchange are allocated once per number of columns
// it is applied to. Apply is the distributed SpMV with the overlap of the
// blueprint, section 4.2; ApplyBlock the same for several vectors at once.
type Operator struct {
	m  *Matrix
	be backend.Backend

	diag     backend.Matrix
	offd     backend.Matrix // the off-diagonal blocks joined (offDiagonal); nil without
	halos    map[int]*haloBuffers
	schedule Schedule

	prec   backend.Precision // the precision Bind was asked for
	narrow bool              // double blocks of float32 numbers stored in float32
}

// haloBuffers holds the buffers of the halo exchange of blocks of k columns:
// every count of the halo plan times k.
type haloBuffers struct {
	k       int
	sendIdx backend.Index        // all send lists, concatenated, expanded to k columns
	sendDev backend.Vector       // packed values on the device
	sendBuf *comm.Buf[float64]   // the same on the host, for MPI
	sends   []*comm.Buf[float64] // views of sendBuf, one per Send
	recvBuf *comm.Buf[float64]   // all halos on the host
	haloDev backend.Vector       // all halos on the device
	recv    []*comm.Buf[float64] // views of recvBuf, one per off-diagonal block
	halo    []backend.Vector     // views of haloDev, one per off-diagonal block
	dot     backend.Sum          // the k sums of ApplyDots
	unpin   []func()
	links   *peerLinks      // the exchanges that go device to device; nil: none
	recvs   []*comm.Request // per off-diagonal block: its halo (nil from a peer)
	sent    []*comm.Request // per send through the host
}

// Bind uploads the matrix to be, its values in precision p, and allocates
// the halo buffers of single-vector products. Free releases them.
//
// In double precision, a block whose values are all float32 numbers (the
// integer stencils of many discretizations, graph Laplacians) is stored in
// float32: exactly the same values, with the arithmetic in float64, and half
// the bytes to move. On the CPU the products are bit for bit those of
// float64 storage; a GPU may split a row's sum over fewer threads when the
// row holds fewer bytes, and its products then differ in rounding only.
// BindWide keeps float64 regardless.
func (m *Matrix) Bind(be backend.Backend, p backend.Precision) (*Operator, error) {
	return m.bind(be, p, true, nil)
}

// BindWide is Bind with every value in float64, also where float32 would
// hold it exactly: what Bind's narrowing saves is measured against it.
func (m *Matrix) BindWide(be backend.Backend) (*Operator, error) {
	return m.bind(be, backend.Double, false, nil)
}

// BindDiagonal is Bind for a Matrix without Diag (NewLocalOffDiagonal):
// diag is its diagonal block, made on be already, which the Operator takes
// (and frees) whether or not the binding succeeds; the off-diagonal blocks
// are uploaded as Bind uploads them. Collective, as Bind.
func (m *Matrix) BindDiagonal(be backend.Backend, diag backend.Matrix, p backend.Precision) (*Operator, error) {
	n := m.LocalRows()
	if m.Diag != nil || diag.Rows() != n || diag.Cols() != n {
		diag.Free()
		err := fmt.Errorf("dsmat: bind a diagonal block of %dx%d to a stripe of %d rows (host block: %t)",
			diag.Rows(), diag.Cols(), n, m.Diag != nil)
		return nil, m.Comm.Agree(err) // as bind's ranks do before the halo buffers
	}
	return m.bind(be, p, true, diag)
}

// bind binds m, with its diagonal block diag when the backend holds it.
func (m *Matrix) bind(be backend.Backend, p backend.Precision, narrow bool, diag backend.Matrix) (*Operator, error) {
	op := &Operator{m: m, be: be, halos: make(map[int]*haloBuffers), prec: p, narrow: narrow, diag: diag}
	err := op.upload()
	// the halo buffers are collective: every rank goes on to them or none
	if err = m.Comm.Agree(err); err == nil {
		_, err = op.buffers(1)
	}
	if err != nil {
		op.Free()
		return nil, fmt.Errorf("dsmat: bind matrix to %s: %w", be.Name(), err)
	}
	return op, nil
}

// upload uploads the blocks that the backend does not hold yet.
func (op *Operator) upload() error {
	var err error
	switch {
	case op.diag != nil:
	case op.m.Diag == nil:
		return fmt.Errorf("dsmat: the matrix's diagonal block is on a backend: bind it with BindDiagonal")
	default:
		if op.diag, err = op.newBlock(op.m.Diag, nil); err != nil {
			return err
		}
	}
	if a, rowMap := op.m.offDiagonal(); a != nil {
		op.offd, err = op.newBlock(a, rowMap)
	}
	return err
}

// newBlock uploads block a (with its row map) in the precision that keeps
// its values as Bind promises.
func (op *Operator) newBlock(a *csr.Matrix[float64], rowMap []int32) (backend.Matrix, error) {
	return op.be.NewMatrix(a, rowMap, op.storage(a.Val))
}

// storage is the precision vals are stored in: single when asked, or when
// narrowing and every value is a float32 number; else double.
func (op *Operator) storage(vals []float64) backend.Precision {
	if op.prec == backend.Single || (op.narrow && exactInFloat32(vals)) {
		return backend.Single
	}
	return backend.Double
}

// exactInFloat32 reports whether float32 holds every value of vals exactly
// (NaN never compares equal: a NaN keeps float64). It scans on all cores
// and stops early at the first value that does not fit.
func exactInFloat32(vals []float64) bool {
	var inexact atomic.Bool
	parallel.For(len(vals), func(_, lo, hi int) {
		for i := lo; i < hi && !inexact.Load(); i += 4096 {
			for _, v := range vals[i:min(i+4096, hi)] {
				if float64(float32(v)) != v {
					inexact.Store(true)
					return
				}
			}
		}
	})
	return !inexact.Load()
}

// Precision reports how this rank stores the operator's values: Single
// when every block is stored in float32 (asked for, or narrowed by Bind).
// Ranks decide on their own blocks, so they may differ.
func (op *Operator) Precision() backend.Precision {
	for _, a := range op.blocks() {
		if a.Precision() == backend.Double {
			return backend.Double
		}
	}
	return backend.Single
}

// StoredPrecision is Precision over every rank: Single when every rank
// stores all its blocks in float32. Collective.
func (op *Operator) StoredPrecision() (backend.Precision, error) {
	wide := 0.0
	if op.Precision() == backend.Double {
		wide = 1
	}
	somewhere, err := comm.AllreduceScalar(op.m.Comm, comm.Max, wide)
	if err != nil || somewhere > 0 {
		return backend.Double, err
	}
	return backend.Single, nil
}

// Bytes is what one product reads of this rank's stored blocks: values,
// column indices and row pointers.
func (op *Operator) Bytes() int64 {
	var n int64
	for _, a := range op.blocks() {
		val := int64(8)
		if a.Precision() == backend.Single {
			val = 4
		}
		n += (4+val)*int64(a.NNZ()) + 4*int64(a.Rows()+1)
	}
	return n
}

// ProductBytes is what one product with a block of k columns must move on
// this rank: the stored blocks once (Bytes), and each column of x read and
// of y written once.
func (op *Operator) ProductBytes(k int) int64 {
	return op.Bytes() + 16*int64(op.m.LocalRows())*int64(k)
}

// blocks are the operator's stored blocks.
func (op *Operator) blocks() []backend.Matrix {
	if op.offd == nil {
		return []backend.Matrix{op.diag}
	}
	return []backend.Matrix{op.diag, op.offd}
}

// buffers returns the buffers for blocks of k columns, allocating them on
// first use.
func (op *Operator) buffers(k int) (*haloBuffers, error) {
	if x := op.halos[k]; x != nil {
		return x, nil
	}
	x := &haloBuffers{k: k}
	err := x.alloc(op.m, op.be)
	if err := op.m.Comm.Agree(err); err != nil { // the handshake needs every rank
		x.free()
		return nil, fmt.Errorf("dsmat: halo buffers for %d columns: %w", k, err)
	}
	// every rank agrees, so that a link one end failed to make is dropped
	// by both
	x.links, err = connectPeers(op.m, op.be, x)
	if err := op.m.Comm.Agree(err); err != nil {
		x.free()
		return nil, fmt.Errorf("dsmat: device-to-device halos for %d columns: %w", k, err)
	}
	op.halos[k] = x
	return x, nil
}

func (x *haloBuffers) alloc(m *Matrix, be backend.Backend) error {
	var err error
	nrecv := 0
	for _, b := range m.Off {
		nrecv += len(b.Cols) * x.k
	}
	if x.dot, err = be.NewSum(x.k); err != nil {
		return err
	}
	x.recvBuf = comm.NewBuf[float64](nrecv)
	if x.haloDev, err = be.NewVector(nrecv); err != nil {
		return err
	}
	off := 0
	for _, b := range m.Off {
		n := len(b.Cols) * x.k
		x.recv = append(x.recv, x.recvBuf.Slice(off, n))
		x.halo = append(x.halo, x.haloDev.Slice(off, n))
		off += n
	}

	var idx []int32
	for _, s := range m.Sends {
		idx = append(idx, expand(s.Idx, x.k)...)
	}
	if x.sendIdx, err = be.NewIndex(idx); err != nil {
		return err
	}
	if x.sendDev, err = be.NewVector(len(idx)); err != nil {
		return err
	}
	x.sendBuf = comm.NewBuf[float64](len(idx))
	off = 0
	for _, s := range m.Sends {
		n := len(s.Idx) * x.k
		x.sends = append(x.sends, x.sendBuf.Slice(off, n))
		off += n
	}
	for _, host := range [][]float64{x.sendBuf.Data, x.recvBuf.Data} {
		if len(host) == 0 {
			continue
		}
		unpin, err := be.Pin(host)
		if err != nil {
			return err
		}
		x.unpin = append(x.unpin, unpin)
	}
	x.recvs = make([]*comm.Request, len(m.Off))
	x.sent = make([]*comm.Request, len(m.Sends))
	return nil
}

func (x *haloBuffers) free() {
	if x.links != nil {
		x.links.free()
	}
	for _, unpin := range x.unpin {
		unpin()
	}
	for _, v := range []interface{ Free() }{x.sendIdx, x.sendDev, x.haloDev, x.dot} {
		if v != nil {
			v.Free()
		}
	}
	for _, buf := range []*comm.Buf[float64]{x.sendBuf, x.recvBuf} {
		if buf != nil {
			buf.Free()
		}
	}
}

// Schedule orders the communication and computation of an SpMV. Only
// benchmarks change it: Sequential and LocalOnly exist to measure how much of
// the halo haloBuffers the overlap hides.
type Schedule int

const (
	// Overlap is the blueprint's: the diagonal product runs while the
	// halos travel, and the off-diagonal part once they have landed.
	Overlap Schedule = iota
	// Sequential exchanges every halo first, then computes.
	Sequential
	// LocalOnly skips the haloBuffers (the products use stale halos): the
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
// need are packed and their copy to the host starts, the diagonal block's
// product is queued (on a GPU it runs while the copy and then the messages
// travel), the packed entries are sent, each halo is uploaded as it
// arrives, and the off-diagonal blocks, joined in one, are applied once
// all have.
func (op *Operator) Apply(y, x backend.Vector) error { return op.ApplyBlock(y, x, 1) }

// ApplyBlock computes Y = A*X for row-major blocks of k columns (k vectors at
// once, see backend.SpMM): one pass over the matrix and one message per
// neighbour for all of them.
//
// Halos between ranks whose devices reach each other (backend.Peers) go
// device to device, beside the diagonal product, and the host does not
// wait for them.
func (op *Operator) ApplyBlock(y, x backend.Vector, k int) error {
	return op.apply(y, x, k, nil)
}

// ApplyDots is ApplyBlock that also sets dots[c] to this rank's part of
// X[:,c]'Y[:,c] for the k = len(dots) columns (PCG's p'Ap). The products
// compute them as they go (backend.SpMMDot), without a pass of their own
// over x and y.
func (op *Operator) ApplyDots(y, x backend.Vector, dots []float64) error {
	k := len(dots)
	if k < 1 {
		return fmt.Errorf("dsmat: spmv: dot products of %d columns", k)
	}
	ex, err := op.buffers(k)
	if err != nil {
		return err
	}
	if err := op.apply(y, x, k, ex.dot); err != nil {
		_ = op.be.TakeSum(ex.dot, dots) // no partial sums left for the next call
		return err
	}
	return op.be.TakeSum(ex.dot, dots)
}

// ApplyDotsTo is ApplyBlock that also adds this rank's part of
// X[:,c]'Y[:,c] to sum c of s (a Sum of the operator's backend with at
// least k sums), without waiting for them: a method that reads these sums
// together with others of its own (single-reduction CG) waits for the
// device once.
func (op *Operator) ApplyDotsTo(y, x backend.Vector, k int, s backend.Sum) error {
	if s == nil {
		return fmt.Errorf("dsmat: spmv: no sums for the dot products")
	}
	return op.apply(y, x, k, s)
}

// apply is ApplyBlock, with every product adding the columns' x'(its rows
// of y) to the sums dot when dot is not nil.
func (op *Operator) apply(y, x backend.Vector, k int, dot backend.Sum) error {
	ex, err := op.buffers(k)
	if err != nil {
		return err
	}
	var w backend.Vector // the dot's other vector: x, indexed like y
	if dot != nil {
		w = x
	}
	be := op.be
	if op.schedule == LocalOnly {
		op.product(y, op.diag, x, ex, 0, w, dot)
		op.applyOff(y, ex, w, dot)
		return be.Err()
	}
	wait := op.pack(ex, x)
	ex.links.begin()
	if op.schedule == Overlap {
		op.product(y, op.diag, x, ex, 0, w, dot)
	}
	ex.links.put(x)
	if err := op.post(ex, wait); err != nil {
		return err
	}
	if op.schedule == Sequential {
		if err := comm.Waitall(ex.recvs); err != nil {
			return fmt.Errorf("dsmat: spmv halo: %w", err)
		}
		ex.links.await()
		for i := range ex.recvs {
			if ex.links.inbox(i) == nil {
				op.land(ex, i)
			}
		}
		op.product(y, op.diag, x, ex, 0, w, dot)
	} else {
		ex.links.await()
		for {
			i, err := comm.Waitany(ex.recvs)
			if err != nil {
				return fmt.Errorf("dsmat: spmv halo: %w", err)
			}
			if i < 0 {
				break
			}
			op.land(ex, i)
		}
	}
	op.applyOff(y, ex, w, dot)
	ex.links.release()
	if err := comm.Waitall(ex.sent); err != nil {
		return fmt.Errorf("dsmat: spmv send: %w", err)
	}
	return be.Err()
}

// product queues y = a*x + beta*y for blocks of ex.k columns, adding the
// columns' w'(a*x) to the sums dot when w is not nil.
func (op *Operator) product(y backend.Vector, a backend.Matrix, x backend.Vector, ex *haloBuffers, beta float64, w backend.Vector, dot backend.Sum) {
	if w != nil {
		op.be.SpMMDot(y, a, x, ex.k, beta, w, dot)
		return
	}
	op.be.SpMM(y, a, x, ex.k, beta)
}

// land uploads the halo of off-diagonal block i, arrived through the
// host, for the products queued next. (The halos from peers the device
// waits for itself: peerLinks.await.)
func (op *Operator) land(ex *haloBuffers, i int) {
	op.be.UploadHalo(ex.halo[i], ex.recv[i].Data)
}

// applyOff adds the product of the off-diagonal part with the halos.
func (op *Operator) applyOff(y backend.Vector, ex *haloBuffers, w backend.Vector, dot backend.Sum) {
	if op.offd != nil {
		op.product(y, op.offd, ex.haloDev, ex, 1, w, dot)
	}
}

// pack starts packing the entries of x that neighbours need through the
// host into the host send buffer; the returned function waits for it. A
// rank that only receives through the host packs nothing but still calls
// PackHalo, which orders its halo uploads after the work queued before.
// Without exchanges through the host it does nothing.
func (op *Operator) pack(ex *haloBuffers, x backend.Vector) func() error {
	if !ex.throughHost(len(ex.recvs), len(ex.sends)) {
		return func() error { return nil }
	}
	return op.be.PackHalo(ex.sendBuf.Data, ex.sendDev, x, ex.sendIdx)
}

// throughHost reports whether any of the nOff halos received or the nSend
// sent goes through the host.
func (ex *haloBuffers) throughHost(nOff, nSend int) bool {
	return ex.links.count() < nOff+nSend
}

// post posts the receive of every halo that comes through the host (nil
// for those from peers), waits for the pack, and posts the sends through
// the host.
func (op *Operator) post(ex *haloBuffers, wait func() error) error {
	c := op.m.Comm
	var err error
	for k := range ex.recvs {
		ex.recvs[k] = nil
		if ex.links.inbox(k) != nil {
			continue
		}
		if ex.recvs[k], err = comm.Irecv(c, ex.recv[k], op.m.Off[k].Rank, comm.TagHalo); err != nil {
			return fmt.Errorf("dsmat: spmv receive: %w", err)
		}
	}
	if err := wait(); err != nil {
		return fmt.Errorf("dsmat: spmv pack: %w", err)
	}
	for k, buf := range ex.sends {
		ex.sent[k] = nil
		if ex.links.outbox(k) != nil {
			continue
		}
		if ex.sent[k], err = comm.Isend(c, buf, op.m.Sends[k].Rank, comm.TagHalo); err != nil {
			return fmt.Errorf("dsmat: spmv send: %w", err)
		}
	}
	return nil
}

// PeerLinks counts this rank's halo exchanges of single vectors that go
// device to device and those that go through the host (each neighbour it
// receives from and each it sends to is one).
func (op *Operator) PeerLinks() (device, host int) {
	ex := op.halos[1]
	if ex == nil {
		return 0, 0
	}
	device = ex.links.count()
	return device, len(ex.recvs) + len(ex.sends) - device
}

// Backend returns the backend the operator computes on.
func (op *Operator) Backend() backend.Backend { return op.be }

// Matrix returns the matrix the operator applies.
func (op *Operator) Matrix() *Matrix { return op.m }

// DiagonalBlock returns the diagonal block on the backend, which the
// operator owns: for reading a block that the backend made back to the host
// (Matrix.SetDiagonal).
func (op *Operator) DiagonalBlock() backend.Matrix { return op.diag }

// ExactDiagonalBlock is DiagonalBlock where the block holds the matrix's
// values exactly (bound in double precision: in float64, or in float32
// where float32 holds every value), and nil where Bind rounded them to
// float32: for a set-up that reads A's values there as the host has them.
func (op *Operator) ExactDiagonalBlock() backend.Matrix {
	if op.prec != backend.Double {
		return nil
	}
	return op.diag
}

// Free releases the device memory and host buffers of the operator.
func (op *Operator) Free() {
	for _, x := range op.halos {
		if x.links != nil {
			// this device's last writes into its peers' memory must
			// land before the mappings close
			_ = op.be.Sync() // Free returns nothing; a failed work keeps its error in Err
		}
		x.free()
	}
	op.halos = nil
	for _, a := range []backend.Matrix{op.offd, op.diag} {
		if a != nil {
			a.Free()
		}
	}
	op.offd, op.diag = nil, nil
}
