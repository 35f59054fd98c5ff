package backend

// Peers is implemented by backends whose device memory another process on
// the same node can write directly (CUDA IPC). A distributed SpMV between
// two such ranks then moves its halo device to device, over NVLink or PCIe,
// instead of device to host, through MPI, and host to device: the exchange
// that a host-staged MPI makes cost a few hundred microseconds per
// neighbour becomes a kernel, and the host waits for nothing.
//
// The receiving process makes an Inbox of a device vector, the sending
// process opens it as an Outbox. The two devices order their work through
// counters in device memory that each writes into the other's: the n-th
// Await waits for the n-th Put, and the (n+1)-th Put for the n-th Release.
// Both ends must therefore make the same number of calls, in SpMV after
// SpMV.
type Peers interface {
	// NewInbox makes dst writable by one process on this node and returns
	// the offer that process passes to NewOutbox (at most
	// PeerMessageBytes).
	NewInbox(dst Vector) (Inbox, []byte, error)
	// NewOutbox opens the inbox another process offered. It fails when that
	// process's device is not on this node, cannot be reached, or is this
	// process's own device; the caller then exchanges through the host.
	// The returned answer goes to the inbox's Connect.
	NewOutbox(offer []byte) (Outbox, []byte, error)
	// BeginPuts marks where the Puts queued after it start: they wait for
	// the work queued before BeginPuts, not for the work queued between it
	// and them (the diagonal product, which they run beside).
	BeginPuts()
	// EndPuts makes the work queued after it wait for the Puts queued
	// before it, so that their sources may change.
	EndPuts()
}

// PeerBatches is implemented by Peers backends that queue the links of
// one product together: the Puts of all its outboxes, the Awaits of all its
// inboxes, their Releases, each in fewer driver calls than link by link
// (on a GPU: one gather launch, and one batch of counter operations per
// kind). The work queued is that of the calls link by link, in the order
// of the slices; callers make those calls where a backend lacks it.
type PeerBatches interface {
	// PutAll is out[j].Put(src, idx[j]) for every j, except that every
	// gather may wait for the last Release of every inbox of out.
	PutAll(src Vector, out []Outbox, idx []Index)
	// AwaitAll is Await of every inbox of in.
	AwaitAll(in []Inbox)
	// ReleaseAll is Release of every inbox of in.
	ReleaseAll(in []Inbox)
}

// PeerMessageBytes bounds the offers and answers of Peers.
const PeerMessageBytes = 512

// Inbox is a device vector that a process on the same node writes.
type Inbox interface {
	// Connect completes the link with the answer of the outbox's NewOutbox.
	Connect(answer []byte) error
	// Await makes the work queued after it wait for the outbox's next Put.
	Await()
	// Release marks that the work queued so far is all the reading of the
	// inbox until the next Await: the outbox's next Put waits for it.
	Release()
	Free()
}

// Outbox writes the inbox of a process on the same node.
type Outbox interface {
	// Put queues inbox[k] = src[idx[k]], after the work queued before the
	// last BeginPuts and after the inbox's last Release.
	Put(src Vector, idx Index)
	Free()
}
