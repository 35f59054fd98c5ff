package dsmat

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
)

// callLog records the calls that a product's links make, in order.
type callLog struct{ calls []string }

func (l *callLog) add(format string, args ...any) {
	l.calls = append(l.calls, fmt.Sprintf(format, args...))
}

// fakePeers is a backend.Peers that records BeginPuts and EndPuts; its
// links record Put, Await and Release.
type fakePeers struct{ log *callLog }

func (p fakePeers) NewInbox(backend.Vector) (backend.Inbox, []byte, error) {
	return nil, nil, errors.New("fake")
}
func (p fakePeers) NewOutbox([]byte) (backend.Outbox, []byte, error) {
	return nil, nil, errors.New("fake")
}
func (p fakePeers) BeginPuts() { p.log.add("BeginPuts") }
func (p fakePeers) EndPuts()   { p.log.add("EndPuts") }

// fakeBatches is fakePeers with backend.PeerBatches.
type fakeBatches struct{ fakePeers }

func (p fakeBatches) PutAll(_ backend.Vector, out []backend.Outbox, idx []backend.Index) {
	p.log.add("PutAll %s/%s", names(out), names(idx))
}
func (p fakeBatches) AwaitAll(in []backend.Inbox)   { p.log.add("AwaitAll %s", names(in)) }
func (p fakeBatches) ReleaseAll(in []backend.Inbox) { p.log.add("ReleaseAll %s", names(in)) }

// names joins the names of the fakes of list with ",".
func names[T any](list []T) string {
	var ns []string
	for _, v := range list {
		ns = append(ns, fmt.Sprint(v))
	}
	return strings.Join(ns, ",")
}

type fakeInbox struct {
	name string
	log  *callLog
}

func (in *fakeInbox) Connect([]byte) error { return nil }
func (in *fakeInbox) Await()               { in.log.add("Await %s", in.name) }
func (in *fakeInbox) Release()             { in.log.add("Release %s", in.name) }
func (in *fakeInbox) Free()                {}
func (in *fakeInbox) String() string       { return in.name }

type fakeOutbox struct {
	name string
	log  *callLog
}

func (out *fakeOutbox) Put(_ backend.Vector, idx backend.Index) {
	out.log.add("Put %s %v", out.name, idx)
}
func (out *fakeOutbox) Free()          {}
func (out *fakeOutbox) String() string { return out.name }

type fakeIndex string

func (x fakeIndex) Len() int { return 0 }
func (x fakeIndex) Free()    {}

// TestPeerLinksBatches: a product's links, of which some go through the
// host (nil), are queued link by link on a backend without
// backend.PeerBatches and in one call per step on one with them, in the
// order of the blocks and sends either way.
func TestPeerLinksBatches(t *testing.T) {
	for _, batched := range []bool{false, true} {
		log := new(callLog)
		var be backend.Peers = fakePeers{log}
		want := []string{"BeginPuts", "Put o1 i1", "Put o3 i3", "EndPuts", "Await a0", "Await a2", "Release a0", "Release a2"}
		if batched {
			be = fakeBatches{fakePeers{log}}
			want = []string{"BeginPuts", "PutAll o1,o3/i1,i3", "EndPuts", "AwaitAll a0,a2", "ReleaseAll a0,a2"}
		}
		l := &peerLinks{be: be,
			in:     []backend.Inbox{&fakeInbox{"a0", log}, nil, &fakeInbox{"a2", log}},
			out:    []backend.Outbox{nil, &fakeOutbox{"o1", log}, nil, &fakeOutbox{"o3", log}},
			outIdx: []backend.Index{nil, fakeIndex("i1"), nil, fakeIndex("i3")},
		}
		l.list()
		if l.count() != 4 || len(l.outboxes) != 2 || (l.batch != nil) != batched {
			t.Errorf("batched %v: %d links, %d sends, batches %v", batched, l.count(), len(l.outboxes), l.batch != nil)
		}
		l.begin()
		l.put(nil)
		l.await()
		l.release()
		if !slices.Equal(log.calls, want) {
			t.Errorf("batched %v: calls %q, want %q", batched, log.calls, want)
		}
	}
}

// TestPeerLinksNone: without links (nil) or with inboxes only, a product
// queues no puts.
func TestPeerLinksNone(t *testing.T) {
	var none *peerLinks
	none.begin()
	none.put(nil)
	none.await()
	none.release()

	log := new(callLog)
	l := &peerLinks{be: fakeBatches{fakePeers{log}}, in: []backend.Inbox{&fakeInbox{"a0", log}}}
	l.list()
	l.begin()
	l.put(nil)
	l.await()
	l.release()
	if want := []string{"AwaitAll a0", "ReleaseAll a0"}; !slices.Equal(log.calls, want) {
		t.Errorf("inboxes only: calls %q, want %q", log.calls, want)
	}
}
