// Package protocol holds what both executors and the client agree on: the wire
// version, the key layout of a queue, the verbs with their keys and arguments,
// and the closed registry of refusal texts.
//
// docs/PROTOCOL.md is the specification; this package is its Go form. Nothing
// here talks to a server.
package protocol

// Wire is the dataset wire version this protocol speaks. The fence of every
// verb compares it with the queue's version key.
const Wire = 2

// WireString is Wire as the bytes stored in the version key.
const WireString = "2"
