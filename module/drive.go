package main

import (
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// drive is every verb's Need/Done loop: it asks the verdict (decide, a pure
// function of what has been read) what it needs, has read perform that read
// through the host and record its replies where decide looks, and asks
// again, until the verdict needs nothing. A verdict that asks again for the
// read just performed has nothing new to look at: that, like a step that
// still needs a read when the loop stops, is a bug, answered as ErrInternal.
// It returns the last step, with its refusal as the error.
func drive[S verdict.Step[N], N ~uint8](decide func() S, read func(step S) error) (S, error) {
	return driveAgain(decide, read, 0)
}

// driveAgain is drive for a verb whose read again may be asked for any
// number of times in a row (CLAIM's heads: each round reads further).
func driveAgain[S verdict.Step[N], N ~uint8](decide func() S, read func(step S) error, again N) (S, error) {
	step := decide()
	for ran := N(0); step.Next() != 0 && (step.Next() != ran || ran == again); step = decide() {
		ran = step.Next()
		if err := read(step); err != nil {
			return step, err
		}
	}
	if step.Refusal() != nil || step.Next() != 0 {
		return step, orInternal(step.Refusal())
	}
	return step, nil
}

// goneOrWritten ends a verb on one job after its verdict: reply 0 when the
// job is gone, else its writes (write) and reply 1.
func goneOrWritten(c *host.Call, gone bool, write func() error) error {
	if gone {
		c.ReplyInt(0)
		return nil
	}
	if err := write(); err != nil {
		return err
	}
	c.ReplyInt(1)
	return nil
}
