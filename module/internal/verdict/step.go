package verdict

// Step is every verb's step as the module's one driver sees it: the read
// the verdict needs next (0, the verb's …None: none, the verdict is final)
// and its refusal. Each verb's step is a struct of its own (its verdict and
// what the handler needs besides); these methods are its two common fields.
type Step[N ~uint8] interface {
	// Next is the step's Need.
	Next() N
	// Refusal is the step's Err.
	Refusal() error
}

// Next is the read s needs (Step).
func (s AddStep) Next() AddRead { return s.Need }

// Refusal is s's refusal (Step).
func (s AddStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s CancelStep) Next() CancelRead { return s.Need }

// Refusal is s's refusal (Step).
func (s CancelStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s ClaimStep) Next() ClaimRead { return s.Need }

// Refusal is s's refusal (Step).
func (s ClaimStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s CompleteManyStep) Next() CompleteManyRead { return s.Need }

// Refusal is s's refusal (Step).
func (s CompleteManyStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s CompleteStep) Next() CompleteRead { return s.Need }

// Refusal is s's refusal (Step).
func (s CompleteStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s ExtendStep) Next() ExtendRead { return s.Need }

// Refusal is s's refusal (Step).
func (s ExtendStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s FailStep) Next() FailRead { return s.Need }

// Refusal is s's refusal (Step).
func (s FailStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s InspectStep) Next() InspectRead { return s.Need }

// Refusal is s's refusal (Step).
func (s InspectStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s InstallStep) Next() InstallRead { return s.Need }

// Refusal is s's refusal (Step).
func (s InstallStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s LogStep) Next() LogRead { return s.Need }

// Refusal is s's refusal (Step).
func (s LogStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s PauseStep) Next() PauseRead { return s.Need }

// Refusal is s's refusal (Step).
func (s PauseStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s ProgressStep) Next() ProgressRead { return s.Need }

// Refusal is s's refusal (Step).
func (s ProgressStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s PromoteStep) Next() PromoteRead { return s.Need }

// Refusal is s's refusal (Step).
func (s PromoteStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s RecoverStep) Next() RecoverRead { return s.Need }

// Refusal is s's refusal (Step).
func (s RecoverStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s RequeueStep) Next() RequeueRead { return s.Need }

// Refusal is s's refusal (Step).
func (s RequeueStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s RescheduleStep) Next() RescheduleRead { return s.Need }

// Refusal is s's refusal (Step).
func (s RescheduleStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s RetryStep) Next() RetryRead { return s.Need }

// Refusal is s's refusal (Step).
func (s RetryStep) Refusal() error { return s.Err }

// Next is the read s needs (Step).
func (s StatsStep) Next() StatsRead { return s.Need }

// Refusal is s's refusal (Step).
func (s StatsStep) Refusal() error { return s.Err }
