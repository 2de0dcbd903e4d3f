package trafikey

// Admin is the operator's handle on a queue: pausing it, its rate limit,
// retention and events, and moving, requeueing and removing jobs one by
// one or in bulk. Producers and handlers do not need it; it holds nothing
// but the queue, so q.Admin() is free to call each time.
type Admin struct{ q *Queue }

// Admin returns the queue's operator verbs.
func (q *Queue) Admin() Admin { return Admin{q} }

// Schedules is the handle on a queue's periodic jobs (Schedule): defining,
// reading, pausing and removing them, and running the schedule step.
type Schedules struct{ q *Queue }

// Schedules returns the queue's schedules.
func (q *Queue) Schedules() Schedules { return Schedules{q} }
