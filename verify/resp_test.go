package verify

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/conformance"
	"github.com/trafikey/trafikey/internal/lua"
	"github.com/trafikey/trafikey/internal/protocol"
)

// A node is one reply, with its RESP type kept exactly, so that two replies
// compare equal only when a client could not tell them apart.
type node struct {
	// Kind is "int", "bulk", "status", "error", "nil" (a RESP3 null, or a
	// RESP2 null bulk), "nilarray" (a RESP2 null array), "array", or, for a
	// RESP3 type the protocol never sends, its name.
	Kind  string
	Text  string // bulk, status and error bytes; the value of other kinds
	Int   int64
	Elems []node
}

// render is a node's canonical text, conformance.Render's form, with
// "(nil array)" for a RESP2 null array (conformance renders a null of
// either kind "(nil)": valkey-go does not tell them apart).
func (n node) render() string {
	switch n.Kind {
	case "int":
		return conformance.Int(n.Int)
	case "bulk":
		return conformance.Bulk(n.Text)
	case "status":
		return conformance.Status(n.Text)
	case "error":
		return conformance.Err(n.Text)
	case "nil":
		return conformance.Nil
	case "nilarray":
		return "(nil array)"
	case "array":
		parts := make([]string, len(n.Elems))
		for i, e := range n.Elems {
			parts[i] = e.render()
		}
		return conformance.Arr(parts...)
	}
	return "(" + n.Kind + ") " + n.Text
}

// fromResult converts a valkey-go result (RESP3) into a node; a transport
// failure is a node of kind "transport".
func fromResult(r valkey.ValkeyResult) node {
	if err := r.NonValkeyError(); err != nil {
		return node{Kind: "transport", Text: err.Error()}
	}
	m, _ := r.ToMessage()
	return fromMessage(m)
}

func fromMessage(m valkey.ValkeyMessage) node {
	switch {
	case m.IsNil():
		return node{Kind: "nil"}
	case m.IsInt64():
		v, _ := m.AsInt64()
		return node{Kind: "int", Int: v}
	case m.IsArray():
		elems, _ := m.ToArray()
		out := node{Kind: "array", Elems: make([]node, len(elems))}
		for i, e := range elems {
			out.Elems[i] = fromMessage(e)
		}
		return out
	case m.IsString():
		s, _ := m.ToString()
		if r := conformance.RenderMessage(m); strings.HasPrefix(r, "(status) ") {
			return node{Kind: "status", Text: s}
		}
		return node{Kind: "bulk", Text: s}
	case m.Error() != nil:
		s, _ := m.ToString()
		return node{Kind: "error", Text: s}
	}
	r := conformance.RenderMessage(m)
	kind, text, _ := strings.Cut(strings.TrimPrefix(r, "("), ") ")
	return node{Kind: kind, Text: text}
}

// rawConn is a RESP2 connection (no HELLO) that keeps every reply's type:
// the protocol's replies are specified in RESP2, where a null bulk and a
// null array are different bytes.
type rawConn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

func dialRaw(ctx context.Context, addr string) (*rawConn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &rawConn{nc: nc, r: bufio.NewReader(nc), w: bufio.NewWriter(nc)}, nil
}

func (c *rawConn) Close() error { return c.nc.Close() }

// do sends one command and reads its reply.
func (c *rawConn) do(args []string) (node, error) {
	_ = c.nc.SetDeadline(time.Now().Add(opTimeout))
	writeCommand(c.w, args)
	if err := c.w.Flush(); err != nil {
		return node{}, err
	}
	return readNode(c.r)
}

func writeCommand(w *bufio.Writer, args []string) {
	fmt.Fprintf(w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(w, "$%d\r\n%s\r\n", len(a), a)
	}
}

func readNode(r *bufio.Reader) (node, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return node{}, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return node{}, fmt.Errorf("malformed reply line %q", line)
	}
	kind, rest := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return node{Kind: "status", Text: rest}, nil
	case '-':
		return node{Kind: "error", Text: rest}, nil
	case ':':
		n, err := strconv.ParseInt(rest, 10, 64)
		return node{Kind: "int", Int: n}, err
	case '$':
		n, err := strconv.Atoi(rest)
		if err != nil {
			return node{}, err
		}
		if n < 0 {
			return node{Kind: "nil"}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return node{}, err
		}
		return node{Kind: "bulk", Text: string(buf[:n])}, nil
	case '*':
		n, err := strconv.Atoi(rest)
		if err != nil {
			return node{}, err
		}
		if n < 0 {
			return node{Kind: "nilarray"}, nil
		}
		out := node{Kind: "array", Elems: make([]node, n)}
		for i := range out.Elems {
			if out.Elems[i], err = readNode(r); err != nil {
				return node{}, err
			}
		}
		return out, nil
	}
	return node{}, fmt.Errorf("reply type %q in RESP2", kind)
}

// resp2Exec runs calls as the executors do, on a RESP2 connection: EVALSHA
// (EVAL when the script is not cached) on a Lua side, EMQ.<VERB> on a
// native one.
type resp2Exec struct {
	conn   *rawConn
	native bool
}

func (e resp2Exec) call(v *protocol.Verb, numkeys string, rest []string) node {
	if e.native {
		return e.must(e.conn.do(append([]string{v.Command, numkeys}, rest...)))
	}
	src := lua.Source(v)
	sum := sha1.Sum([]byte(src))
	r := e.must(e.conn.do(append([]string{"EVALSHA", hex.EncodeToString(sum[:]), numkeys}, rest...)))
	if r.Kind == "error" && strings.HasPrefix(r.Text, "NOSCRIPT") {
		r = e.must(e.conn.do(append([]string{"EVAL", src, numkeys}, rest...)))
	}
	return r
}

// must turns a transport failure into a node of kind "transport".
func (e resp2Exec) must(n node, err error) node {
	if err != nil {
		return node{Kind: "transport", Text: err.Error()}
	}
	return n
}
