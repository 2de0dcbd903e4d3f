package host

import (
	"bytes"
	"encoding/binary"
	"errors"
	"syscall"
	"testing"
	"unsafe"
)

// stream builds a host-reply stream as call.c encodes it.
type stream []byte

func (s stream) str(b []byte) stream {
	s = append(s, rawString)
	s = binary.NativeEndian.AppendUint32(s, uint32(len(b)))
	return append(s, b...)
}

func (s stream) errReply(text string) stream {
	s = append(s, rawError)
	s = binary.NativeEndian.AppendUint32(s, uint32(len(text)))
	return append(s, text...)
}

func (s stream) int(v int64) stream {
	s = append(s, rawInteger)
	return binary.NativeEndian.AppendUint64(s, uint64(v))
}

func (s stream) null() stream { return append(s, rawNull) }

func (s stream) array(n int) stream {
	s = append(s, rawArray)
	return binary.NativeEndian.AppendUint32(s, uint32(n))
}

func (s stream) callFail(errno syscall.Errno) stream {
	s = append(s, rawCallFail)
	return binary.NativeEndian.AppendUint64(s, uint64(errno))
}

func (s stream) raw(t byte) stream { return append(s, t) }

func decoded(s stream, n int) Results {
	a := &arena{}
	a.decode(s, n)
	return Results{a: a, gen: a.gen}
}

func TestDecodeScalars(t *testing.T) {
	bin := make([]byte, 256)
	for i := range bin {
		bin[i] = byte(i)
	}
	r := decoded(stream{}.str(bin).int(-42).null().str(nil), 4)
	if r.Len() != 4 {
		t.Fatalf("Len = %d", r.Len())
	}
	v, err := r.At(0)
	if b, e := v.Bytes(); err != nil || e != nil || !bytes.Equal(b, bin) {
		t.Fatalf("string: %q %v %v", b, err, e)
	}
	v, _ = r.At(1)
	if n, err := v.Int(); err != nil || n != -42 {
		t.Fatalf("int: %d %v", n, err)
	}
	if _, err := v.Bytes(); !errors.Is(err, ErrHostReply) {
		t.Fatalf("Bytes of an int: %v, want ErrHostReply", err)
	}
	v, _ = r.At(2)
	if !v.IsNull() {
		t.Fatalf("null: kind %v", v.Kind())
	}
	if b, ok, err := v.OptBytes(); b != nil || ok || err != nil {
		t.Fatalf("OptBytes of null: %q %v %v", b, ok, err)
	}
	v, _ = r.At(3)
	if b, ok, err := v.OptBytes(); len(b) != 0 || !ok || err != nil {
		t.Fatalf("OptBytes of empty string: %q %v %v", b, ok, err)
	}
}

func TestDecodeArrays(t *testing.T) {
	// A CLAIM-like reply: [[id, payload, attempt], [id, payload, attempt]].
	s := stream{}.array(2).
		array(3).str([]byte("1")).str([]byte("a\x00b")).int(1).
		array(3).str([]byte("2")).str([]byte{0xff, 0xfe}).int(2).
		int(7)
	r := decoded(s, 2)
	v, err := r.At(0)
	if err != nil || v.Kind() != KindArray || v.Len() != 2 {
		t.Fatalf("outer: %v %v %d", err, v.Kind(), v.Len())
	}
	job := v.Index(1)
	if p, _ := job.Index(1).Bytes(); !bytes.Equal(p, []byte{0xff, 0xfe}) {
		t.Fatalf("payload %q", p)
	}
	if n, _ := job.Index(2).Int(); n != 2 {
		t.Fatalf("attempt %d", n)
	}
	var ids []string
	v.Elems(func(i int, e Value) bool {
		id, _ := e.Index(0).Bytes()
		ids = append(ids, string(id))
		return true
	})
	if len(ids) != 2 || ids[0] != "1" || ids[1] != "2" {
		t.Fatalf("ids %q", ids)
	}
	if v, err := r.At(1); err != nil {
		t.Fatalf("second command: %v", err)
	} else if n, _ := v.Int(); n != 7 {
		t.Fatalf("second command %d", n)
	}
}

func TestDecodeDepth(t *testing.T) {
	four := stream{}.array(1).array(1).array(1).array(2).int(1).str([]byte("x"))
	v, err := decoded(four, 1).At(0)
	if err != nil {
		t.Fatalf("four deep: %v", err)
	}
	if n, _ := v.Index(0).Index(0).Index(0).Index(0).Int(); n != 1 {
		t.Fatalf("innermost %d", n)
	}
	// C cuts a fifth level off as TOODEEP.
	five := stream{}.array(1).array(1).array(1).array(1).raw(rawTooDeep).int(9)
	r := decoded(five, 2)
	if _, err := r.At(0); !errors.Is(err, ErrHostReply) {
		t.Fatalf("five deep: %v, want ErrHostReply", err)
	}
	if v, err := r.At(1); err != nil {
		t.Fatalf("the command after a refused reply: %v", err)
	} else if n, _ := v.Int(); n != 9 {
		t.Fatalf("the command after: %d", n)
	}
	// A deeper array that C did not cut off is malformed, never a panic.
	if _, err := decoded(stream{}.array(1).array(1).array(1).array(1).array(0), 1).At(0); !errors.Is(err, ErrHostReply) {
		t.Fatalf("uncut fifth level: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	s := stream{}.errReply("WRONGTYPE Operation against a key holding the wrong kind of value").
		callFail(syscall.EACCES).
		callFail(syscall.ENOENT).
		array(2).int(1).errReply("ERR nested")
	r := decoded(s, 4)
	if _, err := r.At(0); err == nil || err.Error() != "WRONGTYPE Operation against a key holding the wrong kind of value" {
		t.Fatalf("error reply: %v", err)
	} else if !errors.Is(err, ErrWrongType) {
		t.Fatalf("errors.Is(WRONGTYPE, ErrWrongType) = false")
	}
	if _, err := r.At(1); !errors.Is(err, ErrNoPerm) {
		t.Fatalf("EACCES: %v", err)
	}
	if _, err := r.At(2); !errors.Is(err, ErrHostReply) {
		t.Fatalf("ENOENT: %v", err)
	}
	v, err := r.At(3)
	if err != nil || v.Index(1).Kind() != KindError || string(v.Index(1).Text()) != "ERR nested" {
		t.Fatalf("nested error: %v %v", err, v.Index(1).Kind())
	}
	if err := r.firstError(); err == nil || err.Error()[:9] != "WRONGTYPE" {
		t.Fatalf("firstError %v", err)
	}
}

// Every reply type outside RESP2 (map, set, bool, double, big number,
// verbatim, attribute, promise, unknown) is refused, at the top or nested.
func TestDecodeUnsupported(t *testing.T) {
	for _, ty := range []byte{5, 6, 7, 8, 9, 10, 11, 12, 0xff, 99} {
		r := decoded(stream{}.raw(ty).array(2).int(1).raw(ty).int(3), 3)
		for i := range 2 {
			if _, err := r.At(i); !errors.Is(err, ErrHostReply) {
				t.Errorf("type %d, command %d: %v, want ErrHostReply", ty, i, err)
			}
		}
		if v, err := r.At(2); err != nil {
			t.Errorf("type %d: the command after: %v", ty, err)
		} else if n, _ := v.Int(); n != 3 {
			t.Errorf("type %d: the command after = %d", ty, n)
		}
	}
}

// A truncated or lying stream is refused, never read out of bounds.
func TestDecodeMalformed(t *testing.T) {
	full := stream{}.array(2).str([]byte("hello")).int(5)
	for cut := range len(full) {
		r := decoded(full[:cut], 1)
		if _, err := r.At(0); !errors.Is(err, ErrHostReply) {
			t.Errorf("cut at %d: %v", cut, err)
		}
	}
	huge := stream{}.array(1 << 30)
	if _, err := decoded(huge, 1).At(0); !errors.Is(err, ErrHostReply) {
		t.Errorf("array longer than the stream: %v", err)
	}
	long := append(stream{rawString}, 0xff, 0xff, 0xff, 0x7f)
	if _, err := decoded(long, 1).At(0); !errors.Is(err, ErrHostReply) {
		t.Errorf("string longer than the stream: %v", err)
	}
	if r := decoded(stream{}.int(1), 3); r.Len() != 3 {
		t.Errorf("more calls than replies: Len %d", r.Len())
	} else if _, err := r.At(2); !errors.Is(err, ErrHostReply) {
		t.Errorf("missing reply: %v", err)
	}
}

func TestStaleValuePanics(t *testing.T) {
	a := &arena{}
	a.decode(stream{}.int(1), 1)
	v, _ := Results{a: a, gen: a.gen}.At(0)
	a.decode(stream{}.int(2), 1) // the next host call at this depth
	defer func() {
		if recover() == nil {
			t.Fatal("a stale Value was read")
		}
	}()
	v.Int()
}

// Decoding a batch allocates nothing once the arena has grown.
func TestDecodeAllocs(t *testing.T) {
	s := stream{}.array(3).
		array(3).str([]byte("1")).str(bytes.Repeat([]byte("p"), 100)).int(1).
		array(3).str([]byte("2")).str([]byte("q")).int(1).
		null().
		int(4).errReply("ERR x")
	a := &arena{}
	a.decode(s, 3)
	allocs := testing.AllocsPerRun(1000, func() {
		a.decode(s, 3)
		r := Results{a: a, gen: a.gen}
		v, _ := r.At(0)
		v.Elems(func(_ int, e Value) bool {
			if e.Kind() == KindArray {
				_, _ = e.Index(1).Bytes()
			}
			return true
		})
		_, _ = r.At(1)
	})
	if allocs != 0 {
		t.Fatalf("decode allocates %v times per batch", allocs)
	}
}

func TestExpectType(t *testing.T) {
	r := decoded(stream{}.str([]byte("none")).str([]byte("zset")).str([]byte("hash")).int(1), 4)
	for i, want := range []error{nil, nil, ErrWrongType, ErrHostReply} {
		v, _ := r.At(i)
		if err := ExpectType(v, "zset"); !errors.Is(err, want) || (want == nil && err != nil) {
			t.Errorf("reply %d: %v, want %v", i, err, want)
		}
	}
}

func (s stream) ref(b []byte) stream {
	s = append(s, rawRef)
	s = binary.NativeEndian.AppendUint64(s, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))))
	return binary.NativeEndian.AppendUint32(s, uint32(len(b)))
}

// A long string by reference decodes as a view of the memory it names, and
// the arena knows that memory (and no other) for the rest of the command,
// past the next decode; a truncated reference is refused.
func TestDecodeRef(t *testing.T) {
	payload := bytes.Repeat([]byte("payload!"), refMin/8+1)
	other := bytes.Repeat([]byte("x"), refMin)
	a := &arena{}
	a.decode(stream{}.array(2).ref(payload).int(7), 1)
	r := Results{a: a, gen: a.gen}
	v, err := r.At(0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := v.Index(0).Bytes()
	if err != nil || !bytes.Equal(b, payload) || unsafe.SliceData(b) != unsafe.SliceData(payload) {
		t.Fatalf("ref decoded as %d bytes (%v), want a view of the payload", len(b), err)
	}
	a.decode(stream{}.int(1), 1)
	if !a.kept(payload) || !a.kept(payload[5:refMin+2]) || a.kept(other) || a.kept(append(payload[:0:0], payload...)) {
		t.Errorf("kept: the payload and its parts only")
	}
	if got := decoded(stream{}.ref(payload)[:9], 1); got.firstError() != ErrHostReply {
		t.Errorf("truncated ref: %v, want ErrHostReply", got.firstError())
	}
}
