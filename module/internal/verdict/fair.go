package verdict

// This file is fair claiming's turn allocation (docs/PROTOCOL.md, "Fair
// claiming"): pure arithmetic over the participants CLAIM read.

// FairParticipant is one participant of a claim: the jobs without a lane, or
// a ready lane.
type FairParticipant struct {
	// Supply is how many jobs it can take: pending's head as read, or a
	// lane's waiting jobs (capped by cap − active).
	Supply int64
	// Taken is the number of turns it was given, Last the number (1-based,
	// counted on from meta's turn) of its last one; 0 when not served.
	Taken, Last int64
}

// PendingPlace is where the jobs without a lane, of turn pturn, stand among
// the ready lanes of scores (in turns order: score, then name): before the
// first lane whose turn is not below theirs, since at equal turn pending
// comes first.
func PendingPlace(pturn int64, scores []float64) int {
	p := float64(pturn)
	for i, s := range scores {
		if s >= p {
			return i
		}
	}
	return len(scores)
}

// FairTurns gives up to count turns in passes over ps, in their order, one
// job per participant per pass, until count turns are given or no
// participant has a job left. It sets each participant's Taken and Last and
// appends the index of the participant of each turn to order (turn j is
// order[j−1]), which it returns. live is memory for the participants with a
// job left, returned for the next call.
func FairTurns(ps []FairParticipant, count int64, order, live []int32) ([]int32, []int32) {
	order = order[:0]
	// live holds the participants with a job left, in order: a pass walks
	// them and drops those it empties, so the work is O(len(ps) + count)
	live = live[:0]
	for i := range ps {
		ps[i].Taken, ps[i].Last = 0, 0
		if ps[i].Supply > 0 {
			live = append(live, int32(i))
		}
	}
	given := int64(0)
	for given < count && len(live) > 0 {
		kept := live[:0]
		for k, i := range live {
			if given == count {
				kept = append(kept, live[k:]...)
				break
			}
			p := &ps[i]
			given++
			p.Taken++
			p.Last = given
			order = append(order, i)
			if p.Taken < p.Supply {
				kept = append(kept, i)
			}
		}
		live = kept
	}
	return order, live
}
