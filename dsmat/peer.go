package dsmat

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
)

// peerMsgBytes is the size of a handshake message: a 16-bit length, then
// the backend's offer or answer (length 0: none, exchange through the host).
const peerMsgBytes = 2 + backend.PeerMessageBytes

// peerLinks are the halo exchanges of one haloBuffers that go device to
// device (backend.Peers), between ranks whose devices reach each other; the
// others go through the host. The devices order them among themselves:
// the hosts pass no messages for them.
type peerLinks struct {
	be     backend.Peers
	batch  backend.PeerBatches // be's, when it has them; nil: link by link
	in     []backend.Inbox     // per off-diagonal block; nil: through the host
	out    []backend.Outbox    // per send; nil: through the host
	outIdx []backend.Index     // per send with an outbox: its list for k columns
	// the inboxes, outboxes and outboxes' lists of in, out and outIdx
	// that are not nil, in order: the links that a product queues
	inboxes  []backend.Inbox
	outboxes []backend.Outbox
	lists    []backend.Index
}

// connectPeers makes the links between the halo buffers x of this rank
// and its neighbours': each receiver offers its halo, each sender tries to
// open it and answers. Every rank takes part, peers or not, so that the
// two ends of a link agree; a link that cannot go device to device goes
// through the host. Collective over the neighbours. It returns nil links
// when none goes device to device.
func connectPeers(m *Matrix, be backend.Backend, x *haloBuffers) (*peerLinks, error) {
	peers, _ := be.(backend.Peers)
	l := &peerLinks{be: peers, in: make([]backend.Inbox, len(m.Off)), out: make([]backend.Outbox, len(m.Sends)),
		outIdx: make([]backend.Index, len(m.Sends))}
	offers, err := handshake(m, m.offRanks(), m.sendRanks(), comm.TagPeerOffer, func(i int) []byte {
		if peers == nil {
			return nil
		}
		in, offer, err := peers.NewInbox(x.halo[i])
		if err != nil {
			return nil // through the host
		}
		l.in[i] = in
		return offer
	})
	if err != nil {
		l.free()
		return nil, err
	}
	var failed error // an error here still answers, so the other end does not wait
	replies, err := handshake(m, m.sendRanks(), m.offRanks(), comm.TagPeerAnswer, func(k int) []byte {
		offer := offers[k]
		if peers == nil || offer == nil || failed != nil {
			return nil
		}
		out, answer, err := peers.NewOutbox(offer)
		if err != nil {
			return nil // not on this node, or unreachable: through the host
		}
		idx, err := be.NewIndex(expand(m.Sends[k].Idx, x.k))
		if err != nil {
			out.Free()
			failed = err
			return nil
		}
		l.out[k], l.outIdx[k] = out, idx
		return answer
	})
	if err = errors.Join(err, failed); err != nil {
		l.free()
		return nil, err
	}
	for i, answer := range replies {
		switch {
		case answer == nil && l.in[i] != nil:
			l.in[i].Free()
			l.in[i] = nil
		case answer != nil && l.in[i] == nil:
			err = errors.Join(err, fmt.Errorf("rank %d answered an offer this rank did not make", m.Off[i].Rank))
		case answer != nil:
			err = errors.Join(err, l.in[i].Connect(answer))
		}
	}
	if err != nil {
		l.free()
		return nil, err
	}
	if l.list(); l.count() == 0 {
		l.free()
		return nil, nil
	}
	return l, nil
}

// list lists the links that go device to device (the inboxes, outboxes
// and lists of in, out and outIdx that are not nil, in order) and takes
// the backend's batches of links if it has them.
func (l *peerLinks) list() {
	for _, in := range l.in {
		if in != nil {
			l.inboxes = append(l.inboxes, in)
		}
	}
	for k, out := range l.out {
		if out != nil {
			l.outboxes = append(l.outboxes, out)
			l.lists = append(l.lists, l.outIdx[k])
		}
	}
	l.batch, _ = l.be.(backend.PeerBatches)
}

// count is the number of links that go device to device (0 for nil).
func (l *peerLinks) count() int {
	if l == nil {
		return 0
	}
	return len(l.inboxes) + len(l.outboxes)
}

// handshake sends msg(i) to rank to[i] and receives a message from each
// rank of from; it returns their payloads in that order, nil for an empty
// one.
func handshake(m *Matrix, to, from []int, tag int, msg func(i int) []byte) (received [][]byte, err error) {
	out := comm.NewBuf[uint8](len(to) * peerMsgBytes)
	in := comm.NewBuf[uint8](len(from) * peerMsgBytes)
	defer out.Free()
	defer in.Free()
	// every request posted completes before the buffers are freed, also
	// after a failure
	var reqs []*comm.Request
	var errs []error
	post := func(r *comm.Request, err error) {
		if err != nil {
			errs = append(errs, err)
		} else {
			reqs = append(reqs, r)
		}
	}
	for j, q := range from {
		post(comm.Irecv(m.Comm, in.Slice(j*peerMsgBytes, peerMsgBytes), q, tag))
	}
	for i, q := range to {
		buf := out.Slice(i*peerMsgBytes, peerMsgBytes)
		p := msg(i)
		if len(p) > backend.PeerMessageBytes {
			p = nil // a backend bug; exchange through the host
		}
		binary.LittleEndian.PutUint16(buf.Data, uint16(len(p)))
		copy(buf.Data[2:], p)
		post(comm.Isend(m.Comm, buf, q, tag))
	}
	if err := errors.Join(append(errs, comm.Waitall(reqs))...); err != nil {
		return nil, fmt.Errorf("dsmat: peer handshake: %w", err)
	}
	for j := range from {
		buf := in.Data[j*peerMsgBytes : (j+1)*peerMsgBytes]
		n := int(binary.LittleEndian.Uint16(buf))
		if n == 0 || n > backend.PeerMessageBytes {
			received = append(received, nil)
			continue
		}
		received = append(received, append([]byte(nil), buf[2:2+n]...))
	}
	return received, nil
}

// offRanks lists the ranks of the off-diagonal blocks (this rank's
// sources), sendRanks those of the sends (its targets).
func (m *Matrix) offRanks() []int {
	r := make([]int, len(m.Off))
	for i, b := range m.Off {
		r[i] = b.Rank
	}
	return r
}

func (m *Matrix) sendRanks() []int {
	r := make([]int, len(m.Sends))
	for i, s := range m.Sends {
		r[i] = s.Rank
	}
	return r
}

// begin marks where the halos of the outboxes start: they run beside the
// work queued after it (the diagonal product). It does nothing without
// outboxes.
func (l *peerLinks) begin() {
	if l != nil && len(l.outboxes) > 0 {
		l.be.BeginPuts()
	}
}

// put queues the halos of the outboxes, in one go where the backend
// batches them; the work queued after it waits for them to leave.
func (l *peerLinks) put(x backend.Vector) {
	if l == nil || len(l.outboxes) == 0 {
		return
	}
	if l.batch != nil {
		l.batch.PutAll(x, l.outboxes, l.lists)
	} else {
		for j, out := range l.outboxes {
			out.Put(x, l.lists[j])
		}
	}
	l.be.EndPuts()
}

// await makes the work queued after it wait for the halos of every inbox,
// in one go where the backend batches them.
func (l *peerLinks) await() { l.onInboxes(backend.PeerBatches.AwaitAll, backend.Inbox.Await) }

// release marks the work queued so far as all the reading of every inbox
// until the next await (Inbox.Release), in one go where the backend
// batches them.
func (l *peerLinks) release() { l.onInboxes(backend.PeerBatches.ReleaseAll, backend.Inbox.Release) }

// onInboxes calls all with every inbox where the backend batches links,
// and otherwise one on each inbox in turn.
func (l *peerLinks) onInboxes(all func(backend.PeerBatches, []backend.Inbox), one func(backend.Inbox)) {
	switch {
	case l == nil || len(l.inboxes) == 0:
	case l.batch != nil:
		all(l.batch, l.inboxes)
	default:
		for _, in := range l.inboxes {
			one(in)
		}
	}
}

// inbox returns the inbox of off-diagonal block i, nil when its halo comes
// through the host (or l is nil).
func (l *peerLinks) inbox(i int) backend.Inbox {
	if l == nil {
		return nil
	}
	return l.in[i]
}

// outbox returns the outbox of send k, nil when it goes through the host.
func (l *peerLinks) outbox(k int) backend.Outbox {
	if l == nil {
		return nil
	}
	return l.out[k]
}

func (l *peerLinks) free() {
	for _, in := range l.in {
		if in != nil {
			in.Free()
		}
	}
	for k, out := range l.out {
		if out != nil {
			out.Free()
			l.outIdx[k].Free()
		}
	}
}

// expand turns local indices into those of blocks of k columns.
func expand(idx []int32, k int) []int32 {
	out := make([]int32, 0, len(idx)*k)
	for _, i := range idx {
		for c := range int32(k) {
			out = append(out, i*int32(k)+c)
		}
	}
	return out
}
