package main

import (
	"math"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	o, err := parseArgs(nil)
	if err != nil || o.gomaxprocs != 2 || o.gcpercent != 100 || o.memlimit != math.MaxInt64 || o.debugCommands || !o.traC || !o.keyWrites {
		t.Fatalf("defaults: %+v %v", o, err)
	}
	o, err = parseArgs([]string{"gomaxprocs", "3", "gcpercent", "400", "memlimit", "1073741824", "debug-commands", "yes", "tra-c", "no", "key-writes", "no"})
	if err != nil || o.gomaxprocs != 3 || o.gcpercent != 400 || o.memlimit != 1<<30 || !o.debugCommands || o.traC || o.keyWrites {
		t.Fatalf("all set: %+v %v", o, err)
	}
	if o, err = parseArgs([]string{"gcpercent", "-1", "debug-commands", "no"}); err != nil || o.gcpercent != -1 || o.debugCommands {
		t.Fatalf("gcpercent -1: %+v %v", o, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bogus", "1"}, "unknown module argument"},
		{[]string{"gomaxprocs"}, "pairs"},
		{[]string{"gomaxprocs", "0"}, "gomaxprocs"},
		{[]string{"gomaxprocs", "+2"}, "gomaxprocs"},
		{[]string{"gomaxprocs", "two"}, "gomaxprocs"},
		{[]string{"gcpercent", "-2"}, "gcpercent"},
		{[]string{"memlimit", "0"}, "memlimit"},
		{[]string{"debug-commands", "true"}, "debug-commands"},
		{[]string{"tra-c", "1"}, "tra-c"},
		{[]string{"key-writes", "off"}, "key-writes"},
		{[]string{"gomaxprocs", "1", "gomaxprocs", "2"}, "twice"},
	} {
		if _, err := parseArgs(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseArgs(%q) = %v, want an error about %q", tc.args, err, tc.want)
		}
	}
}

func TestDebugNumkeys(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		max  int
		want int
		err  string
	}{
		{"2", 3, 2, ""},
		{"0", 0, 0, ""},
		{"03", 5, 0, "not an integer"},
		{"-1", 5, 0, "negative"},
		{"4", 3, 0, "greater than"},
		{"x", 3, 0, "not an integer"},
	} {
		n, err := numkeys([]byte(tc.arg), tc.max)
		if tc.err == "" && (err != nil || n != tc.want) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("numkeys(%q, %d) = %d, %v", tc.arg, tc.max, n, err)
		}
	}
}
