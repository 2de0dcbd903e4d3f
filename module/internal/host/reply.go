package host

import (
	"encoding/binary"
	"syscall"
	"unsafe"
)

// Kind is the type of a host reply value. Host calls run in RESP2, so these
// are all the types a reply can have; anything else makes the call fail with
// ErrHostReply.
type Kind uint8

// The kinds of host reply values.
const (
	// KindInvalid is the kind of the zero Value.
	KindInvalid Kind = iota
	// KindNull is a null bulk string or null array.
	KindNull
	// KindString is a bulk or simple string (binary safe).
	KindString
	// KindInt is an integer.
	KindInt
	// KindArray is an array, nested at most four deep.
	KindArray
	// KindError is an error reply nested inside an array. A top-level error
	// reply is not a Value: it is the call's error.
	KindError
)

// The raw type bytes of the host-reply stream (shim.h: EMQ_REPLY_*, EMQ_NODE_*).
const (
	rawString   = 0
	rawError    = 1
	rawInteger  = 2
	rawArray    = 3
	rawNull     = 4
	rawCallFail = 200
	rawTooDeep  = 201
	rawRef      = 202
)

// refMin is the length from which a host-reply string comes by reference
// (shim.h: EMQ_REF_MIN): its bytes stay in the server's memory, kept until
// the command ends, and a client reply of them is emitted from there.
const refMin = 1024

// maxReplyDepth is how deep arrays may nest in a host reply (shim.h:
// EMQ_MAX_REPLY_DEPTH); C cuts deeper arrays off as rawTooDeep.
const maxReplyDepth = 4

// node is one decoded reply value. Strings are views into the C reply buffer.
type node struct {
	s    []byte
	i    int64
	n    int32 // array elements
	next int32 // index of the node after this subtree
	kind Kind
}

type status uint8

const (
	statusOK status = iota
	statusErrorReply
	statusCallFail
	statusUnsupported
)

// result is the outcome of one host command of a batch.
type result struct {
	node  int32
	st    status
	errno int64
}

// arena holds the decoded replies of the last host call at one nesting depth.
// It is reused by every call at that depth; gen tells a Value or Results
// taken from an earlier call that its memory has been reused.
type arena struct {
	nodes   []node
	results []result
	gen     uint32
	// refs are the strings of this command's host replies that came by
	// reference: server memory that lives until the command ends. Unlike
	// the nodes they span every host call of the command (reset by the
	// dispatcher), so a reply of their bytes can be sent from there.
	refs []span
}

// span is a range of server memory, [start, end).
type span struct{ start, end uintptr }

// kept reports whether p lies within one string a host reply of this
// command sent by reference: memory valid until the command ends.
func (a *arena) kept(p []byte) bool {
	if len(p) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	end := start + uintptr(len(p))
	for _, s := range a.refs {
		if start >= s.start && end <= s.end {
			return true
		}
	}
	return false
}

// decode classifies the reply stream of ncalls host commands. It never fails
// and never panics: a reply outside RESP2, an array nested too deep, or a
// malformed stream makes that command's result ErrHostReply. Nothing is
// allocated once the arena has grown to the working size.
func (a *arena) decode(buf []byte, ncalls int) {
	a.gen++
	a.nodes = a.nodes[:0]
	a.results = a.results[:0]
	pos := 0
	for range ncalls {
		r := result{node: int32(len(a.nodes))}
		switch {
		case pos >= len(buf):
			r.st = statusUnsupported
		case buf[pos] == rawCallFail:
			if pos+9 > len(buf) {
				r.st, pos = statusUnsupported, len(buf)
				break
			}
			r.st = statusCallFail
			r.errno = int64(binary.NativeEndian.Uint64(buf[pos+1:]))
			pos += 9
		default:
			next, ok, supported := a.parse(buf, pos, 0)
			switch {
			case !ok:
				r.st, pos = statusUnsupported, len(buf)
			case !supported:
				r.st, pos = statusUnsupported, next
			default:
				pos = next
				if a.nodes[r.node].kind == KindError {
					r.st = statusErrorReply
				}
			}
		}
		a.results = append(a.results, r)
	}
}

// parse decodes the value at pos, at array nesting level (0 at the top).
// ok is false when the stream is malformed, supported false when the value
// or one inside it is not a RESP2 type.
func (a *arena) parse(buf []byte, pos, level int) (next int, ok, supported bool) {
	if pos >= len(buf) {
		return pos, false, false
	}
	t := buf[pos]
	pos++
	idx := len(a.nodes)
	a.nodes = append(a.nodes, node{})
	nd := node{}
	supported = true
	switch t {
	case rawString, rawError:
		if pos+4 > len(buf) {
			return pos, false, false
		}
		n := int(binary.NativeEndian.Uint32(buf[pos:]))
		pos += 4
		if n > len(buf)-pos {
			return pos, false, false
		}
		nd.s = buf[pos : pos+n : pos+n]
		pos += n
		nd.kind = KindString
		if t == rawError {
			nd.kind = KindError
		}
	case rawRef:
		// the address and length of a string in server memory
		if pos+12 > len(buf) {
			return pos, false, false
		}
		p := *(*unsafe.Pointer)(unsafe.Pointer(unsafe.SliceData(buf[pos : pos+8])))
		n := int(binary.NativeEndian.Uint32(buf[pos+8:]))
		pos += 12
		nd.s = unsafe.Slice((*byte)(p), n)
		nd.kind = KindString
		start := uintptr(p)
		a.refs = append(a.refs, span{start, start + uintptr(n)})
	case rawInteger:
		if pos+8 > len(buf) {
			return pos, false, false
		}
		nd.i = int64(binary.NativeEndian.Uint64(buf[pos:]))
		pos += 8
		nd.kind = KindInt
	case rawNull:
		nd.kind = KindNull
	case rawArray:
		if level >= maxReplyDepth || pos+4 > len(buf) {
			return pos, false, false
		}
		n := binary.NativeEndian.Uint32(buf[pos:])
		pos += 4
		nd.kind = KindArray
		nd.n = int32(n)
		if n > uint32(len(buf)-pos) { // every element takes at least one byte
			return pos, false, false
		}
		for range n {
			var sup bool
			if pos, ok, sup = a.parse(buf, pos, level+1); !ok {
				return pos, false, false
			}
			supported = supported && sup
		}
	default: // RESP3 types and rawTooDeep: a bare type byte
		supported = false
	}
	nd.next = int32(len(a.nodes))
	a.nodes[idx] = nd
	return pos, true, supported
}

// errnoError maps the errno of a failed RM_Call: EACCES is the caller's ACL,
// anything else a host fault.
func errnoError(errno int64) error {
	if errno == int64(syscall.EACCES) {
		return ErrNoPerm
	}
	return ErrHostReply
}

// Results are the replies of a batch of host commands, valid until the
// command's next batch runs or the handler returns (CheckKeys and BeginWrites
// leave them intact, so read values can be written back after the guard).
type Results struct {
	a   *arena
	gen uint32
}

func (r Results) arena() *arena {
	if r.a == nil || r.a.gen != r.gen {
		panic(errStale)
	}
	return r.a
}

// Len is how many commands of the batch ran: all of them, or up to and
// including the first that failed when the batch stops at errors.
func (r Results) Len() int {
	if r.a == nil {
		return 0
	}
	return len(r.arena().results)
}

// At returns the reply of the i-th command, or its error: the error reply's
// text as an Error (WRONGTYPE …, ERR …), ErrNoPerm for a call refused by ACL,
// or ErrHostReply for a reply the adapter does not accept.
func (r Results) At(i int) (Value, error) {
	a := r.arena()
	res := a.results[i]
	switch res.st {
	case statusErrorReply:
		return Value{}, Error(a.nodes[res.node].s)
	case statusCallFail:
		return Value{}, errnoError(res.errno)
	case statusUnsupported:
		return Value{}, ErrHostReply
	}
	return Value{a: a, gen: r.gen, i: res.node}, nil
}

// firstError is the error of the first command that failed, or nil.
func (r Results) firstError() error {
	for i := range r.Len() {
		if _, err := r.At(i); err != nil {
			return err
		}
	}
	return nil
}

// Value is one decoded host reply, or an element of one. It is a view: its
// bytes live in scratch memory that the next host call at the same depth (or
// the end of the command) reuses, so copy what must outlive that. Using a
// Value after its memory was reused panics, which the dispatcher turns into
// ErrInternal rather than reading reused memory.
type Value struct {
	a   *arena
	gen uint32
	i   int32
}

const errStale = "host: reply used after its scratch memory was reused (copy it before the next host call)"

func (v Value) node() *node {
	if v.a == nil || v.a.gen != v.gen {
		panic(errStale)
	}
	return &v.a.nodes[v.i]
}

// Kind returns the type of the value; KindInvalid for the zero Value.
func (v Value) Kind() Kind {
	if v.a == nil {
		return KindInvalid
	}
	return v.node().kind
}

// IsNull reports whether the value is a null.
func (v Value) IsNull() bool { return v.Kind() == KindNull }

// Int returns an integer reply, or ErrHostReply for any other kind.
func (v Value) Int() (int64, error) {
	if v.Kind() != KindInt {
		return 0, ErrHostReply
	}
	return v.node().i, nil
}

// Bytes returns a string reply (binary safe), or ErrHostReply for any other
// kind. The bytes are a view; see Value.
func (v Value) Bytes() ([]byte, error) {
	if v.Kind() != KindString {
		return nil, ErrHostReply
	}
	return v.node().s, nil
}

// OptBytes returns a string reply with ok true, a null with ok false (for
// example HGET of a missing field), or ErrHostReply for any other kind.
func (v Value) OptBytes() (b []byte, ok bool, err error) {
	switch v.Kind() {
	case KindString:
		return v.node().s, true, nil
	case KindNull:
		return nil, false, nil
	}
	return nil, false, ErrHostReply
}

// Text returns the bytes of a string or of a nested error, nil otherwise.
func (v Value) Text() []byte {
	switch v.Kind() {
	case KindString, KindError:
		return v.node().s
	}
	return nil
}

// Len returns the number of elements of an array, 0 for any other kind.
func (v Value) Len() int {
	if v.Kind() != KindArray {
		return 0
	}
	return int(v.node().n)
}

// Index returns the i-th element of an array. It panics (answered as
// ErrInternal) when v is not an array or i is out of range: check Len first.
// It walks past the i elements before it; to visit every element of a long
// array use Elems, which walks the array once.
func (v Value) Index(i int) Value {
	nd := v.node()
	if nd.kind != KindArray || i < 0 || i >= int(nd.n) {
		panic("host: Value.Index out of range")
	}
	j := v.i + 1
	for range i {
		j = v.a.nodes[j].next
	}
	return Value{a: v.a, gen: v.gen, i: j}
}

// Elems calls f with each element of an array in order, walking the array
// once; it does nothing for other kinds. f returns false to stop.
func (v Value) Elems(f func(i int, e Value) bool) {
	if v.Kind() != KindArray {
		return
	}
	nd := v.node()
	j := v.i + 1
	for i := range int(nd.n) {
		if !f(i, Value{a: v.a, gen: v.gen, i: j}) {
			return
		}
		j = v.a.nodes[j].next
	}
}

// ExpectType checks the reply of TYPE for a key the command is about to
// write: "none" (the write creates it) or want (for example "zset") pass,
// another type is ErrWrongType, and a reply that is not a string is
// ErrHostReply. Batch the TYPE reads with the command's other reads.
func ExpectType(v Value, want string) error {
	t, err := v.Bytes()
	switch {
	case err != nil:
		return err
	case string(t) == "none" || string(t) == want:
		return nil
	}
	return ErrWrongType
}
