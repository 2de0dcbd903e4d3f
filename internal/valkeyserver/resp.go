package valkeyserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// ReplyError is an error reply from the server. Its text is exactly what the
// server sent, without the leading '-', e.g. "NOPERM No permissions to access
// a key".
type ReplyError string

// Error returns the server's text.
func (e ReplyError) Error() string { return string(e) }

// Code returns the first word of the reply, e.g. "ERR", "NOPERM", "WRONGTYPE".
func (e ReplyError) Code() string {
	code, _, _ := strings.Cut(string(e), " ")
	return code
}

// Conn is a minimal RESP2 connection, meant for a handful of administrative
// commands in tests and tools, not for load. It is not safe for concurrent use.
//
// Replies decode as follows: simple and bulk strings → string, integers →
// int64, arrays → []any, null bulk strings and null arrays → nil, error replies
// nested in an array → ReplyError values. A top-level error reply is returned
// as the error of Do. Replies of RESP3 types, which a server only sends after
// HELLO 3, decode to the nearest of these.
type Conn struct {
	nc  net.Conn
	r   *bufio.Reader
	w   *bufio.Writer
	err error // sticky transport error; the stream is out of step after one
}

// Dial opens a connection to addr (host:port). The context bounds the dial only.
func Dial(ctx context.Context, addr string) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return &Conn{nc: nc, r: bufio.NewReader(nc), w: bufio.NewWriter(nc)}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// Do sends one command and returns its decoded reply. An error reply is
// returned as a ReplyError.
func (c *Conn) Do(ctx context.Context, args ...string) (any, error) {
	replies, err := c.DoMulti(ctx, args)
	if err != nil {
		return nil, err
	}
	if re, ok := replies[0].(ReplyError); ok {
		return nil, re
	}
	return replies[0], nil
}

// DoMulti pipelines the commands and returns one decoded reply per command.
// Error replies are returned in the slice as ReplyError values; the error
// result is only for transport and protocol failures, after which the
// connection is unusable.
func (c *Conn) DoMulti(ctx context.Context, cmds ...[]string) ([]any, error) {
	if c.err != nil {
		return nil, c.err
	}
	if len(cmds) == 0 {
		return nil, nil
	}
	for _, cmd := range cmds {
		if len(cmd) == 0 {
			return nil, errors.New("valkeyserver: empty command")
		}
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.nc.SetDeadline(dl)
	} else {
		_ = c.nc.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	replies, err := c.roundTrip(cmds)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		c.err = fmt.Errorf("valkeyserver: connection to %s: %w", c.nc.RemoteAddr(), err)
		_ = c.nc.Close()
		return nil, c.err
	}
	return replies, nil
}

func (c *Conn) roundTrip(cmds [][]string) ([]any, error) {
	for _, cmd := range cmds {
		writeCommand(c.w, cmd)
	}
	if err := c.w.Flush(); err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	replies := make([]any, len(cmds))
	for i := range cmds {
		v, err := readReply(c.r)
		if err != nil {
			return nil, fmt.Errorf("read reply %d of %d: %w", i+1, len(cmds), err)
		}
		replies[i] = v
	}
	return replies, nil
}

func writeCommand(w *bufio.Writer, args []string) {
	w.WriteByte('*')
	w.WriteString(strconv.Itoa(len(args)))
	w.WriteString("\r\n")
	for _, a := range args {
		w.WriteByte('$')
		w.WriteString(strconv.Itoa(len(a)))
		w.WriteString("\r\n")
		w.WriteString(a)
		w.WriteString("\r\n")
	}
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return "", fmt.Errorf("malformed reply line %q", line)
	}
	return line[:len(line)-2], nil
}

func readReply(r *bufio.Reader) (any, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	kind, rest := line[0], line[1:]
	switch kind {
	case '+', '(', ',':
		return rest, nil
	case '-':
		return ReplyError(rest), nil
	case ':':
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bad integer reply %q: %w", rest, err)
		}
		return n, nil
	case '_':
		return nil, nil
	case '#':
		if rest == "t" {
			return int64(1), nil
		}
		return int64(0), nil
	case '$', '=', '!':
		n, err := strconv.Atoi(rest)
		if err != nil {
			return nil, fmt.Errorf("bad bulk length %q: %w", rest, err)
		}
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		s := string(buf[:n])
		switch kind {
		case '!':
			return ReplyError(s), nil
		case '=':
			if len(s) >= 4 && s[3] == ':' {
				s = s[4:] // drop the "txt:" format prefix
			}
		}
		return s, nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(rest)
		if err != nil {
			return nil, fmt.Errorf("bad aggregate length %q: %w", rest, err)
		}
		if n < 0 {
			return nil, nil
		}
		if kind == '%' || kind == '|' {
			n *= 2 // maps and attributes flatten to key, value, key, value...
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = readReply(r); err != nil {
				return nil, err
			}
		}
		if kind == '|' { // an attribute precedes the real reply; skip it
			return readReply(r)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unknown reply type %q", line)
	}
}
