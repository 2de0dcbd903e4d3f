package host

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"unsafe"
)

// writer appends to an emq_buf in C memory without copying through Go memory:
// buf is a view of the whole C allocation, n the bytes written so far. Growth
// is a rare crossing (C realloc keeps what was written); in steady state the
// buffer has reached its working size and writing allocates nothing.
type writer struct {
	cb  *C.emq_buf
	buf []byte
	n   int
}

// reset starts writing cb from its beginning.
func (w *writer) reset(cb *C.emq_buf) {
	w.cb = cb
	w.buf = unsafe.Slice((*byte)(unsafe.Pointer(cb.p)), int(cb.cap))
	w.n = 0
}

// grow makes room for extra more bytes. It is small enough to inline, so a
// write into a buffer with room costs no call; growing is growSlow's.
func (w *writer) grow(extra int) {
	if w.n+extra > len(w.buf) {
		w.growSlow(extra)
	}
}

//go:noinline
func (w *writer) growSlow(extra int) {
	need := w.n + extra
	if C.emq_buf_reserve(C.uintptr_t(uintptr(unsafe.Pointer(w.cb))), C.size_t(need)) != 0 {
		panic("host: out of memory growing a scratch buffer")
	}
	w.buf = unsafe.Slice((*byte)(unsafe.Pointer(w.cb.p)), int(w.cb.cap))
}

func (w *writer) byte(b byte) {
	if w.n >= len(w.buf) {
		w.growSlow(1)
	}
	w.buf[w.n] = b
	w.n++
}

func (w *writer) u32(v uint32) {
	if w.n+4 > len(w.buf) {
		w.growSlow(4)
	}
	binary.NativeEndian.PutUint32(w.buf[w.n:], v)
	w.n += 4
}

// patch32 overwrites the uint32 at offset off (a count known only later).
func (w *writer) patch32(off int, v uint32) {
	binary.NativeEndian.PutUint32(w.buf[off:], v)
}

func (w *writer) u64(v uint64) {
	w.grow(8)
	binary.NativeEndian.PutUint64(w.buf[w.n:], v)
	w.n += 8
}

func (w *writer) i64(v int64) {
	w.grow(8)
	binary.NativeEndian.PutUint64(w.buf[w.n:], uint64(v))
	w.n += 8
}

func (w *writer) bytes(p []byte) {
	w.grow(len(p))
	w.n += copy(w.buf[w.n:], p)
}

func (w *writer) string(s string) {
	w.grow(len(s))
	w.n += copy(w.buf[w.n:], s)
}

// done publishes the length to C.
func (w *writer) done() { w.cb.len = C.size_t(w.n) }

// cbytes views n bytes of C memory at p as a slice (nil when n is 0).
func cbytes(p unsafe.Pointer, n int) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

// newCBuf allocates an empty buffer of its own in C memory, for code that
// encodes outside a command (the tests of the encoders). It is never freed.
func newCBuf() *C.emq_buf {
	return (*C.emq_buf)(C.calloc(1, C.size_t(unsafe.Sizeof(C.emq_buf{}))))
}
