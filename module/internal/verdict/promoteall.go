package verdict

// PromoteAll decides EMQ.PROMOTEALL: PROMOTE's verdict (Promote) over the
// head of delayed in place of its due jobs, s.Due being ZRANGE delayed 0
// <limit-1>. card is ZCARD delayed, read with the fence before the head:
// 0 leaves nothing to do, whatever the head. The reply's left is card less
// the head's length.
func PromoteAll(s *PromoteSeen, card Reply[int64]) PromoteStep {
	if !s.Version.Made {
		return PromoteStep{Need: PromoteFirst}
	}
	if err := Fence(s.Version); err != nil {
		return PromoteStep{Err: err}
	}
	if card.Err != nil {
		return PromoteStep{Err: card.Err}
	}
	if card.Val == 0 {
		return PromoteStep{}
	}
	return Promote(s)
}
