package conformance

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/valkey-io/valkey-go"
)

// Replies are compared in a canonical text form that keeps the RESP type and
// every byte, so an expected reply is written once and both executors are
// held to it byte for byte:
//
//	(integer) 5          an integer
//	"text"               a bulk string (Go-quoted: NUL, invalid UTF-8 and all
//	                     other bytes are escaped, never lost)
//	(status) "OK"        a simple string
//	(error) "ERR ..."    an error reply, its full text ("ERR " included)
//	(nil)                a null bulk or null array
//	[a, b]               an array, elements rendered the same way
//
// Render turns a valkey-go reply into this form; Int, Bulk, Status, Err, Nil
// and Arr build the expected side.

// Render is the canonical text of a reply; a transport failure renders as
// "(transport) <error>".
func Render(r valkey.ValkeyResult) string {
	if err := r.NonValkeyError(); err != nil {
		return "(transport) " + err.Error()
	}
	m, _ := r.ToMessage()
	return RenderMessage(m)
}

// RenderMessage is the canonical text of one reply message, recursively.
func RenderMessage(m valkey.ValkeyMessage) string {
	switch {
	case m.IsNil():
		return Nil
	case m.IsInt64():
		v, _ := m.AsInt64()
		return Int(v)
	case m.IsArray():
		elems, _ := m.ToArray()
		parts := make([]string, len(elems))
		for i, e := range elems {
			parts[i] = RenderMessage(e)
		}
		return Arr(parts...)
	case m.IsString():
		s, _ := m.ToString()
		if messageType(m) == "simple string" {
			return Status(s)
		}
		return Bulk(s)
	case m.Error() != nil:
		// ToString returns an error reply's full text; Error() drops "ERR ".
		s, _ := m.ToString()
		return Err(s)
	}
	return "(" + messageType(m) + ") " + m.String()
}

// messageType is valkey-go's name of the message's RESP type.
func messageType(m valkey.ValkeyMessage) string {
	var pretty struct{ Type string }
	_ = json.Unmarshal([]byte(m.String()), &pretty)
	return pretty.Type
}

// Nil is the canonical text of a null reply.
const Nil = "(nil)"

// Int is the canonical text of an integer reply.
func Int(v int64) string { return "(integer) " + strconv.FormatInt(v, 10) }

// Bulk is the canonical text of a bulk string reply.
func Bulk(s string) string { return strconv.Quote(s) }

// Status is the canonical text of a simple string reply.
func Status(s string) string { return "(status) " + strconv.Quote(s) }

// Err is the canonical text of an error reply with the full text s.
func Err(s string) string { return "(error) " + strconv.Quote(s) }

// Arr is the canonical text of an array of rendered elements.
func Arr(elems ...string) string { return "[" + strings.Join(elems, ", ") + "]" }

// ErrorText is the text a client receives for an error reply of text: the
// server ends an error at its first NUL byte and turns CR and LF into spaces
// (addReplyErrorFormat, the path of a script's error table and of a module's
// ReplyWithError alike). It matters for texts that carry stored bytes.
func ErrorText(text string) string {
	if i := strings.IndexByte(text, 0); i >= 0 {
		text = text[:i]
	}
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(text)
}

// Bulks is an array of bulk strings.
func Bulks(ss ...string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = Bulk(s)
	}
	return Arr(parts...)
}
