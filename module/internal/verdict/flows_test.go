package verdict

import (
	"errors"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// parentRow is a parent's read: att state deps cfail parent onfail lane
// prio wait ("" is absent).
func parentRow(fields ...string) Reply[FlowRow] {
	var r FlowRow
	for i, f := range fields {
		if f != "" {
			r[i] = Str(f)
		}
	}
	return Got(r)
}

// flowRun runs FlowRun, reading each parent it needs from rows.
func flowRun(t *testing.T, events []FlowEvent, rows map[string]Reply[FlowRow]) (FlowResult, *FlowParents, []string) {
	t.Helper()
	var fp FlowParents
	var reads []string
	for range 100 {
		res := FlowRun(events, &fp, nil, nil)
		if res.Need < 0 {
			return res, &fp, reads
		}
		id := string(fp.Rows[res.Need].ID)
		reads = append(reads, id)
		r, ok := rows[id]
		if !ok {
			t.Fatalf("parent %s read, not scripted", id)
		}
		fp.Rows[res.Need].Row = r
	}
	t.Fatal("FlowRun never ends")
	return FlowResult{}, nil, nil
}

func completed(parent, child, result string) FlowEvent {
	return FlowEvent{Parent: []byte(parent), Child: []byte(child), Kind: FinishCompleted, Text: []byte(result)}
}

func died(parent, child, policy, text string) FlowEvent {
	ev := FlowEvent{Parent: []byte(parent), Child: []byte(child), Kind: FinishDied, Text: []byte(text)}
	if policy != "" {
		ev.Policy = []byte(policy)
	}
	return ev
}

func TestFlowRunRelease(t *testing.T) {
	t.Parallel()
	rows := map[string]Reply[FlowRow]{"1": parentRow("0", "waiting", "2", "", "", "", "", "7", "")}
	// one child of two: counted, not released
	res, fp, _ := flowRun(t, []FlowEvent{completed("1", "2", "r2")}, rows)
	p := fp.Rows[0]
	if res.Err != nil || len(res.Told) != 1 || p.K != 1 || p.Deps != 1 || p.Released || string(p.Results[1]) != "r2" {
		t.Fatalf("one child: %+v %+v", res, p)
	}
	// both: released to pending, score by its priority
	res, fp, reads := flowRun(t, []FlowEvent{completed("1", "2", "r2"), completed("1", "3", "")}, rows)
	p = fp.Rows[0]
	if res.Err != nil || !res.ToPending || !p.Released || p.Err != nil || p.Deps != 0 || len(p.Results) != 2 ||
		p.Score != protocol.PendingScore(7, 1) || len(reads) != 1 {
		t.Fatalf("both: %+v %+v %v", res, p, reads)
	}
	// a laned parent goes to its lane, not pending
	rows["1"] = parentRow("0", "waiting", "1", "", "", "", "l", "", "")
	res, fp, _ = flowRun(t, []FlowEvent{completed("1", "2", "")}, rows)
	if res.ToPending || !fp.Rows[0].Released || string(fp.Rows[0].Lane()) != "l" {
		t.Fatalf("lane: %+v %+v", res, fp.Rows[0])
	}
	// released only when the stored deps is k: "01", absent, a third child
	for _, deps := range []string{"", "3"} {
		rows["1"] = parentRow("0", "waiting", deps)
		res, fp, _ = flowRun(t, []FlowEvent{completed("1", "2", ""), completed("1", "3", "")}, rows)
		if res.Err != nil || fp.Rows[0].Released {
			t.Fatalf("deps %q: %+v %+v", deps, res, fp.Rows[0])
		}
	}
	// a parent not waiting, or gone, is not told
	for _, r := range []Reply[FlowRow]{parentRow("0", "pending", "1"), parentRow("", "waiting", "1")} {
		rows["1"] = r
		res, _, _ = flowRun(t, []FlowEvent{completed("1", "2", "x")}, rows)
		if res.Err != nil || len(res.Told) != 0 {
			t.Fatalf("not waiting: %+v", res)
		}
	}
	// a parent released is told no more
	rows["1"] = parentRow("0", "waiting", "1")
	res, fp, _ = flowRun(t, []FlowEvent{completed("1", "2", ""), completed("1", "3", "x")}, rows)
	if fp.Rows[0].K != 1 || len(fp.Rows[0].Results) != 0 {
		t.Fatalf("after release: %+v", fp.Rows[0])
	}
}

func TestFlowRunPolicies(t *testing.T) {
	t.Parallel()
	rows := map[string]Reply[FlowRow]{"1": parentRow("0", "waiting", "3")}
	res, fp, _ := flowRun(t, []FlowEvent{
		died("1", "2", "continue", "e2"), died("1", "3", "ignore", "e3"), died("1", "4", "", "e4"),
	}, rows)
	p := fp.Rows[0]
	if res.Err != nil || len(p.Failures) != 2 || string(p.Failures[1]) != "e2" || string(p.Cfail) != "4" || !p.NewCfail ||
		!p.Released || string(p.Err) != "child 4 failed" || len(res.Deaths) != 1 || res.ToPending {
		t.Fatalf("%+v %+v", res, p)
	}
	// a stored cfail stays: the first child that died
	rows["1"] = parentRow("0", "waiting", "1", "9")
	_, fp, _ = flowRun(t, []FlowEvent{died("1", "2", "", "e")}, rows)
	if p := fp.Rows[0]; string(p.Cfail) != "9" || p.NewCfail || string(p.Err) != "child 9 failed" {
		t.Fatalf("stored cfail: %+v", p)
	}
	// any other policy is fail
	rows["1"] = parentRow("0", "waiting", "2")
	_, fp, _ = flowRun(t, []FlowEvent{died("1", "2", "Continue", "e")}, rows)
	if p := fp.Rows[0]; string(p.Cfail) != "2" {
		t.Fatalf("other policy: %+v", p)
	}
}

func TestFlowRunDeathUpTheTree(t *testing.T) {
	t.Parallel()
	// 1 <- 2 <- 3: 3 dies, 2 (policy continue at 1) dies, 1 records it
	rows := map[string]Reply[FlowRow]{
		"2": parentRow("0", "waiting", "1", "", "1", "continue", "", "", "5000"),
		"1": parentRow("0", "waiting", "2"),
	}
	res, fp, reads := flowRun(t, []FlowEvent{died("2", "3", "", "boom")}, rows)
	if res.Err != nil || len(reads) != 2 || reads[0] != "2" || reads[1] != "1" || len(res.Deaths) != 1 || len(res.Told) != 2 {
		t.Fatalf("%+v %v", res, reads)
	}
	two, one := fp.Rows[0], fp.Rows[1]
	if string(two.Err) != "child 3 failed" || two.Wait() != 5000 || one.Released || string(one.Failures[0]) != "2" ||
		string(one.Failures[1]) != "child 3 failed" {
		t.Fatalf("%+v %+v", two, one)
	}
}

func TestFlowRunRefusals(t *testing.T) {
	t.Parallel()
	errA := errors.New("WRONGTYPE a")
	for _, tc := range []struct {
		row  Reply[FlowRow]
		want error
	}{
		{Failed[FlowRow](errA), errA},
		{parentRow("0", "waiting", "x"), grammar.Refusal(protocol.ErrHashNotInteger)},
		{parentRow("0", "waiting", "-9223372036854775808"), grammar.Refusal(protocol.ErrOverflow)},
	} {
		res, _, _ := flowRun(t, []FlowEvent{completed("1", "2", "")}, map[string]Reply[FlowRow]{"1": tc.row})
		if !errors.Is(res.Err, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.row, res.Err, tc.want)
		}
	}
	// an event without a parent tells nobody and reads nothing
	res, _, reads := flowRun(t, []FlowEvent{{Child: []byte("2"), Kind: FinishRemoved}}, nil)
	if res.Err != nil || len(reads) != 0 || len(res.Told) != 0 {
		t.Fatalf("%+v %v", res, reads)
	}
}
