-- failures.incr.lua: EMQ.FAILURES.INCR, count one failure of a downstream in
-- a window: a counter that expires ttl_ms after its first failure.
--
-- KEYS[1] -> emq:{q}:                  the queue base
-- KEYS[2] -> emq:{q}:version           string, the fence
-- KEYS[3] -> emq:{q}:failures:<name>   string, the counter (name: protocol.ValidBusName)
-- ARGV[1] -> ttl_ms, 1..315360000000 (inside PEXPIRE's bound for any clock)
--
-- Writes INCR, then PEXPIRE <ttl_ms> when the counter had no TTL (PTTL below
-- 0: new, or planted without one). INCR's refusals are predicted from GET.
--
-- Reply: integer, the count after the increment.
-- Refusals, in order: ERR EMQ failures.incr numkeys must be 3; ERR EMQ
-- failures.incr wrong number of arguments; ERR EMQ failures.incr bad key
-- layout; ERR EMQ failures.incr bad ttl; the fence; WRONGTYPE (the counter);
-- ERR value is not an integer or out of range; ERR increment or decrement
-- would overflow.

local VERB = 'failures.incr'
local refusal = shape(VERB, 3, 1) or bus.layout(VERB, 'failures:')
if refusal then return refusal end
if not uint(ARGV[1], 1, bus.MAX_TTL) then return e_bad(VERB, 'ttl') end
refusal = fence()
if refusal then return refusal end

local v = rpcall('GET', KEYS[3])
if type(v) == 'table' then return v end
refusal = bus.incr_refusal(v)
if refusal then return refusal end
local pttl = rcall('PTTL', KEYS[3])

local count = rcall('INCR', KEYS[3])
if pttl < 0 then rcall('PEXPIRE', KEYS[3], ARGV[1]) end
return count
