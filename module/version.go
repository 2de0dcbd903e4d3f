package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
)

// version answers EMQ.VERSION with the wire version: the client's probe for
// whether the module is loaded. No keys, no host call.
func version(c *host.Call) error {
	c.ReplyInt(protocol.Wire)
	return nil
}
