package comm

// The tags of every kind of point-to-point message the project sends,
// allocated in this one place so that no two kinds share a tag: a message
// is matched by its source, communicator and tag, and a stage that reads
// another stage's message would misread it.
const (
	// TagHalo marks the halo values of a distributed product. Every
	// product completes its messages before it returns, so one tag serves
	// every operator.
	TagHalo = 17 + iota
	// TagPeerOffer and TagPeerAnswer mark the handshake in which GPUs of
	// one node offer each other their halo buffers.
	TagPeerOffer
	TagPeerAnswer
)

// The tags of the FSAI set-up's collection of neighbouring rows: what a
// rank asks an owner for, and the rows the owner sends back.
const (
	TagAskCount = 31 + iota // how many numbers a rank asks an owner for
	TagAsk                  // the rows asked for, as pairs (global row, distance)
	TagSize                 // how many rows and entries an owner sends
	TagRows
	TagLens
	TagCols
	TagVals
)
