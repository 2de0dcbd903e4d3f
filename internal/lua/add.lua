-- add.lua: EMQ.ADD, add 1..1000 jobs, each pending or delayed.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:meta      hash, seq: the last id given
-- KEYS[4] -> emq:{q}:stats     hash, counter added
-- KEYS[5] -> emq:{q}:pending   zset
-- KEYS[6] -> emq:{q}:delayed   zset
-- KEYS[7] -> emq:{q}:signal    list
-- ARGV[1] -> n, the number of jobs, 1..1000
-- ARGV[2] -> k, the number of option columns, 0..8
-- ARGV[3 .. 2 + k] -> the option names: lane, parent, onfail, wait, due,
--            timeout, kind, headers
-- ARGV[3 + k + (8 + k)(i-1) ..] -> job i: data priority delay_ms
--            max_attempts backoff backoff_ms unique_key unique_ttl_ms, then
--            its value of each option in the order named (lane: empty for
--            none; parent: empty or the 1-based index of an earlier job of
--            the call; onfail: empty, fail, ignore or continue; wait: empty,
--            0 or 1..86400000 ms; due: empty, 0 or an absolute due time ms,
--            the job then runs at max(now + delay, due); timeout: empty, 0 or
--            1..86400000 ms; kind: 0..128 bytes; headers: 0..8192 bytes)
--
-- A job with a lane and no delay waits in lane:<l> instead of pending, and
-- the lane accounting of lib.lua counts it. A job named as a parent waits in
-- state waiting (zset waiting) with deps <its children> and a kids zset.
--
-- Reply: array of the new ids (bulk strings), in argument order.
-- Refusals, in order: ERR EMQ add numkeys must be 7; ERR EMQ add wrong number
-- of arguments (no ARGV); ERR EMQ add bad count; ERR EMQ add wrong number of
-- arguments (no ARGV[2]); ERR EMQ add bad options; ERR EMQ add wrong number
-- of arguments (ARGV is not 2 + k + (8 + k)n); ERR EMQ add bad key layout;
-- ERR EMQ add bad option; per job ERR EMQ add bad
-- priority|delay|attempts|backoff|backoff_ms|unique_key|unique_ttl|lane|
-- parent|onfail|wait|due|timeout|kind|headers; the
-- fence; WRONGTYPE (meta); ERR hash value is not an integer or ERR increment
-- or decrement would overflow (meta seq); EMQSTATE add id space exhausted;
-- per job with a unique key EMQLOCK add duplicate in batch, NOPERM, WRONGTYPE
-- (unique:<key>), EMQLOCK add duplicate of <id>; NOPERM (rows); EMQSTATE add
-- id exists; the lane accounting's refusals; WRONGTYPE (stats), the HINCRBY
-- refusals (stats added); WRONGTYPE (pending, delayed, waiting, signal);
-- with events on, the events stream's refusals (lib.lua ev_xadd).

local VERB = 'add'
local refusal = shape(VERB, 7)
if refusal then return refusal end
if #ARGV == 0 then return e_arity(VERB) end
local n = uint(ARGV[1], 1, MAX_COUNT)
if not n then return e_bad(VERB, 'count') end
if #ARGV < 2 then return e_arity(VERB) end
local nopt = uint(ARGV[2], 0, MAX_ADD_OPTIONS)
if not nopt then return e_bad(VERB, 'options') end
local per = 8 + nopt
if #ARGV ~= 2 + nopt + per * n then return e_arity(VERB) end
refusal = layout(VERB, {'version', 'meta', 'stats', 'pending', 'delayed', 'signal'})
if refusal then return refusal end

-- the option names: each a known option, named once; then the values, job
-- by job
local cols
cols, refusal = addp.cols(VERB, ARGV, 3, nopt)
if not cols then return refusal end
local p = addp.new(cols, per)
for i = 1, n do
  refusal = addp.job(VERB, p, ARGV, 3 + nopt + per * (i - 1), i)
  if refusal then return refusal end
end

refusal = fence()
if refusal then return refusal end
refusal = addp.read(p, ARGV, KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7])
if refusal then return refusal end
refusal = ev_xadd(p.evs)
if refusal then return refusal end

-- the clock the due times were read with, if any
addp.write(p, ARGV, p.now or now_ms())
return p.ids
