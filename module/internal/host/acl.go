package host

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// KeyAccess says how a command uses a key, for the ACL check: a combination
// of the flags below (the only ones ACLCheckKeyPermissions accepts).
type KeyAccess int

// The key access flags (VALKEYMODULE_CMD_KEY_*).
const (
	// KeyRead: the command reads or returns data of the key.
	KeyRead KeyAccess = C.EMQ_KEY_ACCESS
	// KeyInsert: the command adds data to the key.
	KeyInsert KeyAccess = C.EMQ_KEY_INSERT
	// KeyUpdate: the command changes existing data of the key.
	KeyUpdate KeyAccess = C.EMQ_KEY_UPDATE
	// KeyDelete: the command deletes data of the key.
	KeyDelete KeyAccess = C.EMQ_KEY_DELETE
)

const keyAccessMask = KeyRead | KeyInsert | KeyUpdate | KeyDelete

// CheckKeys checks keys that the command touches outside its declared
// key-spec (keys derived from the queue base) against the caller's ACL, all
// in one crossing, before they are read or written. The server checks the
// declared keys itself. A denial is ErrNoPerm.
//
// Nothing is cached across commands: a user's rules can change between two.
// A caller without an ACL user (the primary link, AOF loading) or a module's
// own call is the server itself and passes; inside a script the caller's user
// cannot be seen, so the check refuses there.
func (c *Call) CheckKeys(access KeyAccess, keys ...[]byte) error {
	c.check()
	if access == 0 || access&^keyAccessMask != 0 {
		panic("host: CheckKeys takes KeyRead, KeyInsert, KeyUpdate and KeyDelete only")
	}
	if len(keys) == 0 {
		return nil
	}
	var w writer
	w.reset(&c.io.keys)
	w.u32(uint32(len(keys)))
	for _, k := range keys {
		w.u32(uint32(len(k)))
		w.bytes(k)
	}
	w.done()
	if C.emq_check_keys(C.uintptr_t(c.ctx), C.uintptr_t(uintptr(unsafe.Pointer(&c.io.keys))), C.int(access)) != 0 {
		return ErrNoPerm
	}
	return nil
}

// MayCall reports whether the caller's ACL allows the command argv (its
// name first, at most 8 arguments in all): its command, key and channel
// permissions, as a script's redis.acl_check_cmd answers them. It is for a
// write the verb may leave out (a notice on a channel), not a refusal: the
// server would run the command unchecked, as the module's own. The caller
// without an ACL user passes; inside a script the answer is false.
func (c *Call) MayCall(argv ...[]byte) bool {
	c.check()
	if len(argv) == 0 || len(argv) > 8 {
		panic("host: MayCall takes a command of 1..8 arguments")
	}
	var w writer
	w.reset(&c.io.keys)
	w.u32(uint32(len(argv)))
	for _, a := range argv {
		w.u32(uint32(len(a)))
		w.bytes(a)
	}
	w.done()
	return C.emq_check_command(C.uintptr_t(c.ctx), C.uintptr_t(uintptr(unsafe.Pointer(&c.io.keys)))) == 0
}

// MayCall is Call.MayCall for a write batch's builder: whether the caller
// may run argv, for a write made only when allowed (a notice the caller's
// ACL may not publish is left out, not refused).
func (b *Batch) MayCall(argv ...[]byte) bool {
	b.own()
	return b.c.MayCall(argv...)
}
