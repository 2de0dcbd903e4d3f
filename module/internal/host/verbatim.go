package host

/*
#include "shim.h"
*/
import "C"

// The TRA family's writes (docs/PROTOCOL.md, "The TRA family"): a TRA write
// is not replicated as its effects but as the command line the client sent,
// through RM_ReplicateVerbatim, and not at all when it changed nothing. The
// adapter test allows this file, verbatim.c and the TRA handler only; every
// EMQ handler writes through Writes.Write.

// WriteVerbatim starts a write batch that replicates nothing by itself (the
// read format): the handler calls ReplicateVerbatim once its writes
// succeeded, so the AOF and the replicas receive the command line as the
// client sent it. It panics (answered as ErrInternal) in a command not
// declared FirstKeyWrite: only the TRA family replicates verbatim.
func (w Writes) WriteVerbatim() *Batch {
	if w.c == nil || w.serial != w.c.serial {
		panic("host: Writes not from BeginWrites of this command")
	}
	if w.c.cmd.Keys != FirstKeyWrite {
		panic("host: WriteVerbatim in " + w.c.cmd.Name + ", which replicates its effects")
	}
	return w.c.lv.batch.start(w.c, false)
}

// ReplicateVerbatim has the server replicate this command as the client sent
// it, once, at the end of the command. Call it after the writes of
// WriteVerbatim succeeded, and not at all when the command changed nothing.
func (w Writes) ReplicateVerbatim() {
	if w.c == nil || w.serial != w.c.serial {
		panic("host: Writes not from BeginWrites of this command")
	}
	if w.c.cmd.Keys != FirstKeyWrite {
		panic("host: ReplicateVerbatim in " + w.c.cmd.Name + ", which replicates its effects")
	}
	C.emq_replicate_verbatim(C.uintptr_t(w.c.ctx))
}

// SetBit is TRA.SETBIT's one host call: it reads the bit at offset (0 to
// 2^32−1) of the command's key, argv[1], as SETBIT reads it, and
// writes value there exactly when plan says so for what it found (bit
// 2·previous+inside of plan, inside meaning that the offset's byte is
// within the string: the handler's verdict over every outcome, decided
// before the call). A write is SETBIT's: the string created or grown with
// zeros to hold the byte, the bit set, the key signalled as modified, the
// keyspace event setbit (class string), and the command replicated
// verbatim, once; a call that writes nothing does none of these. It
// returns ErrWrongType, having written nothing, for a key of another type,
// and ErrBitUnanswered, having written nothing, as ReadBit does.
// It panics (answered as ErrInternal) in a command not declared
// FirstKeyWrite.
func (w Writes) SetBit(offset, value int64, plan uint8) (BitSeen, error) {
	if w.c == nil || w.serial != w.c.serial {
		panic("host: Writes not from BeginWrites of this command")
	}
	if w.c.cmd.Keys != FirstKeyWrite {
		panic("host: SetBit in " + w.c.cmd.Name + ", which replicates its effects")
	}
	if plan > 0xf || value&^1 != 0 {
		panic("host: SetBit with a bad plan or value")
	}
	return w.c.bit(offset, true, plan|uint8(value)<<4)
}
