package host

/*
#include "shim.h"
void emq_replicate_verbatim(uintptr_t ctx);
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
