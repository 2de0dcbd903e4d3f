package host

import (
	"bytes"
	"encoding/binary"
	"testing"
	"unsafe"
)

func newReply() *replyWriter {
	var w writer
	w.reset(newCBuf())
	r := &replyWriter{}
	r.reset(w)
	return r
}

func (r *replyWriter) bytesWritten() []byte {
	return bytes.Clone(unsafe.Slice((*byte)(unsafe.Pointer(r.w.cb.p)), r.w.n))
}

// want builds the client-reply stream that shim.c emits.
type want []byte

func (w want) int(v int64) want {
	return binary.NativeEndian.AppendUint64(append(w, tagInt), uint64(v))
}
func (w want) bulk(s string) want {
	return append(binary.NativeEndian.AppendUint32(append(w, tagBulk), uint32(len(s))), s...)
}
func (w want) array(n int) want {
	return binary.NativeEndian.AppendUint32(append(w, tagArray), uint32(n))
}
func (w want) err(s string) want {
	return append(append(binary.NativeEndian.AppendUint32(append(w, tagError), uint32(len(s))), s...), 0)
}
func (w want) null() want { return append(w, tagNull) }

func TestReplyNested(t *testing.T) {
	r := newReply()
	// A CLAIM reply: an array of [id, payload, attempt] arrays, in an array.
	r.array(2)
	r.array(3)
	r.bulkString("1")
	r.bulk([]byte("a\x00\xff"))
	r.int(1)
	r.array(2)
	r.array(0)
	r.null()
	if why := r.check(); why != "" {
		t.Fatalf("check: %s", why)
	}
	exp := want{}.array(2).array(3).bulk("1").bulk("a\x00\xff").int(1).array(2).array(0).null()
	if got := r.bytesWritten(); !bytes.Equal(got, exp) {
		t.Fatalf("stream\n got %q\nwant %q", got, exp)
	}
}

func TestReplyMisuse(t *testing.T) {
	r := newReply()
	if r.check() == "" {
		t.Fatal("an empty reply passed")
	}
	r.array(2)
	r.int(1)
	if r.check() == "" {
		t.Fatal("an array missing an element passed")
	}
	r.null()
	r.int(3)
	if r.check() == "" {
		t.Fatal("a second value passed")
	}
	r.replace("ERR x")
	if why := r.check(); why != "" {
		t.Fatalf("after replace: %s", why)
	}
	if got, exp := r.bytesWritten(), (want{}).err("ERR x"); !bytes.Equal(got, exp) {
		t.Fatalf("replace wrote %q", got)
	}
	r.replace("")
	r.array(-1)
	if r.check() == "" {
		t.Fatal("a negative array length passed")
	}
	r.replace("")
	for range maxReplyNesting + 1 {
		r.array(1)
	}
	if r.check() == "" {
		t.Fatal("nesting past the limit passed")
	}
}

// An error text is one C string sent without a format: '%' stays, the text
// ends at its first NUL (as the server ends a script's), and CR and LF are
// left to the server, which turns them into spaces for both executors.
func TestReplyErrorText(t *testing.T) {
	for text, exp := range map[string]string{
		"EMQSTALE 100% \x00done": "EMQSTALE 100% ",
		"EMQLOCK a\x00b\x00c":    "EMQLOCK a",
		"EMQLOCK a\r\nb":         "EMQLOCK a\r\nb",
		"":                       "ERR",
	} {
		r := newReply()
		r.errorText(text)
		if got := r.bytesWritten(); !bytes.Equal(got, (want{}).err(exp)) {
			t.Fatalf("%q: stream %q", text, got)
		}
	}
}

func TestReplyAllocs(t *testing.T) {
	r := newReply()
	payload := bytes.Repeat([]byte("x"), 1000)
	build := func() {
		r.reset(r.w)
		r.array(2)
		for range 2 {
			r.array(3)
			r.bulkString("17")
			r.bulk(payload)
			r.int(1)
		}
	}
	build()
	if allocs := testing.AllocsPerRun(1000, build); allocs != 0 {
		t.Fatalf("building a reply allocates %v times", allocs)
	}
	if why := r.check(); why != "" {
		t.Fatal(why)
	}
	if got := r.bytesWritten(); !bytes.Equal(got, (want{}).array(2).array(3).bulk("17").bulk(string(payload)).int(1).array(3).bulk("17").bulk(string(payload)).int(1)) {
		t.Fatal("stream differs")
	}
}

// ReplyBulk of a long host-reply string sent by reference writes a
// reference to its bytes; a copy of them, or a short one, is written out.
func TestReplyBulkRef(t *testing.T) {
	payload := bytes.Repeat([]byte("p"), refMin)
	c := &Call{lv: &level{}}
	c.lv.arena.refs = append(c.lv.arena.refs, span{uintptr(unsafe.Pointer(&payload[0])), uintptr(unsafe.Pointer(&payload[0])) + refMin})
	c.rep = *newReply()
	c.ReplyArray(3)
	c.ReplyBulk(payload)
	c.ReplyBulk(bytes.Clone(payload))
	c.ReplyBulk(payload[:10])
	ref := binary.NativeEndian.AppendUint32(want{tagRef}, refMin)
	ref = binary.NativeEndian.AppendUint64(ref, uint64(uintptr(unsafe.Pointer(&payload[0]))))
	w := append(want{}.array(3), ref...).bulk(string(payload)).bulk(string(payload[:10]))
	if got := c.rep.bytesWritten(); !bytes.Equal(got, w) {
		t.Fatalf("reply stream\n%q\nwant\n%q", got, w)
	}
}
