# The repository's Go modules, for the scripts that check each of them:
# the library at the root, then the modules of its CLI, benchmark, test
# suites and adapters (go.work ties them together for development).
modules=(. bench cmd/trafikey trafikeyprom trafikeyotel verify)
