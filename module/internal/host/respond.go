package host

import (
	"strings"
	"unsafe"
)

// maxReplyNesting bounds how deep a handler's reply arrays may nest.
const maxReplyNesting = 16

// The tags of the client-reply stream (shim.h: EMQ_R_*).
const (
	tagInt   = 'i'
	tagBulk  = 'b'
	tagError = 'e'
	tagNull  = 'n'
	tagArray = 'a'
	tagRef   = 'r'
)

// replyWriter encodes a handler's reply into C memory, where the trampoline
// emits it after the handler returns: the whole reply crosses back to C once.
// It tracks open arrays so that a reply is exactly one complete value; a
// misuse is recorded, not panicked, and answered as ErrInternal.
type replyWriter struct {
	w       writer
	pending [maxReplyNesting]uint32 // elements still owed to each open array
	open    int
	done    bool
	misuse  string
}

func (r *replyWriter) reset(w writer) {
	r.w = w
	r.w.n = 0
	r.open, r.done, r.misuse = 0, false, ""
}

// value reports whether another value may be written.
func (r *replyWriter) value() bool {
	if r.misuse != "" {
		return false
	}
	if r.done {
		r.misuse = "more than one reply value"
		return false
	}
	return true
}

// completed accounts for one finished value.
func (r *replyWriter) completed() {
	for r.open > 0 {
		r.pending[r.open-1]--
		if r.pending[r.open-1] > 0 {
			return
		}
		r.open--
	}
	r.done = true
}

// check returns why the reply is not one complete value, or "".
func (r *replyWriter) check() string {
	switch {
	case r.misuse != "":
		return r.misuse
	case !r.done && r.open > 0:
		return "an array reply is missing elements"
	case !r.done:
		return "the handler replied nothing"
	}
	return ""
}

func (r *replyWriter) int(v int64) {
	if r.value() {
		r.w.byte(tagInt)
		r.w.i64(v)
		r.completed()
	}
}

func (r *replyWriter) bulk(p []byte) {
	if r.value() {
		r.w.byte(tagBulk)
		r.w.u32(uint32(len(p)))
		r.w.bytes(p)
		r.completed()
	}
}

// bulkRef writes a bulk string by reference: p is server memory that lives
// until the command ends (arena.kept), emitted from there by C, and from
// EMQ_REF_REPLY_MIN bytes (shim.h) as the kept server string itself when p
// is one, so that a server avoiding reply copies writes it in place.
func (r *replyWriter) bulkRef(p []byte) {
	if r.value() {
		r.w.byte(tagRef)
		r.w.u32(uint32(len(p)))
		r.w.u64(uint64(uintptr(unsafe.Pointer(unsafe.SliceData(p)))))
		r.completed()
	}
}

func (r *replyWriter) bulkString(s string) {
	if r.value() {
		r.w.byte(tagBulk)
		r.w.u32(uint32(len(s)))
		r.w.string(s)
		r.completed()
	}
}

func (r *replyWriter) null() {
	if r.value() {
		r.w.byte(tagNull)
		r.completed()
	}
}

func (r *replyWriter) array(n int) {
	if !r.value() {
		return
	}
	if n < 0 || n > 1<<31 {
		r.misuse = "bad array length"
		return
	}
	if n > 0 && r.open == maxReplyNesting {
		r.misuse = "reply arrays nested too deep"
		return
	}
	r.w.byte(tagArray)
	r.w.u32(uint32(n))
	if n == 0 {
		r.completed()
		return
	}
	r.pending[r.open] = uint32(n)
	r.open++
}

// errorText writes an error reply. C sends it with ReplyWithError, which
// prefixes '-' and takes no format, so '%' is safe. It must be one C string,
// so the text ends at its first NUL, as every error reply of the server does
// (a script's error reply too: both go through addReplyErrorFormat, which
// also turns CR and LF into spaces); a text that carries stored bytes reads
// the same on both executors.
func (r *replyWriter) errorText(text string) {
	if !r.value() {
		return
	}
	if text == "" {
		text = "ERR"
	}
	if i := strings.IndexByte(text, 0); i >= 0 {
		text = text[:i]
	}
	r.w.byte(tagError)
	r.w.u32(uint32(len(text)))
	r.w.string(text)
	r.w.byte(0)
	r.completed()
}

// replace discards whatever was written and writes one error reply.
func (r *replyWriter) replace(text string) {
	r.reset(r.w)
	r.errorText(text)
}

// ReplyInt replies an integer (or adds one to the open array).
func (c *Call) ReplyInt(v int64) { c.rep.int(v) }

// ReplyBulk replies a bulk string, binary safe; p is copied, but for the
// bytes of a long host-reply string (a payload), which the server emits from
// where it read them.
func (c *Call) ReplyBulk(p []byte) {
	if len(p) >= refMin && c.lv.arena.kept(p) {
		c.rep.bulkRef(p)
		return
	}
	c.rep.bulk(p)
}

// ReplyString replies a bulk string.
func (c *Call) ReplyString(s string) { c.rep.bulkString(s) }

// ReplyNull replies a null.
func (c *Call) ReplyNull() { c.rep.null() }

// ReplyArray starts an array of n elements: the next n values written (each
// possibly an array itself) are its elements.
func (c *Call) ReplyArray(n int) { c.rep.array(n) }

// ReplyError adds an error reply as an element of an array. To answer the
// whole command with an error, return it from the handler instead.
func (c *Call) ReplyError(text string) { c.rep.errorText(text) }
