package host

// Writes is the proof that the write guard passed in this command, and the
// only way to write: its field is unexported, so no code outside this package
// can make one, and only Writes.Write starts a batch with the write format.
type Writes struct {
	c      *Call
	serial uint64
}

// BeginWrites is the write guard. Call it once, after every read, ACL check
// and type check, immediately before the first write. With AvoidReplicaTraffic
// set (CLIENT PAUSE WRITE, a failover in progress) it returns ErrWritePaused
// and nothing has been written.
//
// The server already holds commands flagged write during a pause; the guard is
// the second line of defence (a command reached by a path the pause does not
// hold, such as a nested call). It panics (answered as ErrInternal) in a
// command not flagged write: an unflagged command that writes during a pause
// trips a server assertion.
//
// The state it checks is AvoidReplicaTraffic as the command started, read by
// the C trampoline with the command's other inputs, so the guard costs no
// crossing: a pause or a failover cannot begin while a command runs (both
// start from a command or the server's cron, on this thread), and one that
// ends meanwhile only refuses a call a moment late.
func (c *Call) BeginWrites() (Writes, error) {
	c.check()
	if !c.cmd.writes {
		panic("host: BeginWrites in " + c.cmd.Name + ", which is not flagged write")
	}
	if err := writeGuard(c.avoid); err != nil {
		return Writes{}, err
	}
	return Writes{c: c, serial: c.serial}, nil
}

// writeGuard is the guard's decision.
func writeGuard(avoidReplicaTraffic bool) error {
	if avoidReplicaTraffic {
		return ErrWritePaused
	}
	return nil
}

// Write starts a write batch (the write format): each write is replicated to the
// AOF and the replicas as itself (ZADD with the absolute score the handler
// computed, never the EMQ command), several writes of one command wrapped in
// MULTI/EXEC. The batch stops at the first failed write, and nothing before
// it is undone: settle every type and integer the writes depend on before the
// guard.
func (w Writes) Write() *Batch {
	if w.c == nil || w.serial != w.c.serial {
		panic("host: Writes not from BeginWrites of this command")
	}
	return w.c.lv.batch.start(w.c, true)
}
