module github.com/trafikey/trafikey/bench

go 1.25.0

require (
	github.com/hibiken/asynq v0.26.0
	github.com/schollz/progressbar/v3 v3.19.1
	github.com/trafikey/trafikey v0.0.0
	github.com/valkey-io/valkey-go v1.0.79
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/redis/go-redis/v9 v9.14.1 // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	github.com/spf13/cast v1.10.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/term v0.44.0 // indirect
	golang.org/x/time v0.14.0 // indirect
	google.golang.org/protobuf v1.36.10 // indirect
)

// Nothing is published yet: the module builds against the checkout it
// lives in.
replace github.com/trafikey/trafikey => ..
