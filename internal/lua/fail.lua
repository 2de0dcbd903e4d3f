-- fail.lua: EMQ.FAIL, end an active job's attempt with an error: retry it
-- after its backoff while attempts remain, else dead-letter it.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:stats     hash, counters failed, retried, dead
-- KEYS[4] -> emq:{q}:active    zset
-- KEYS[5] -> emq:{q}:delayed   zset, score = due time ms
-- KEYS[6] -> emq:{q}:dead      zset, score = time of death ms
-- ARGV[1] -> id
-- ARGV[2] -> token, the attempt the caller claimed (any bytes, compared with att)
-- ARGV[3] -> retry: 1 retries while att < max, 0 dead-letters now
-- ARGV[4] -> error text, 0..65536 bytes, stored in the row's err
--
-- Reply: bulk retry or dead; integer 0 when the row is gone.
-- Refusals, in order: ERR EMQ fail numkeys must be 6; ERR EMQ fail wrong
-- number of arguments; ERR EMQ fail bad key layout; ERR EMQ fail bad
-- id|retry|error; the fence; WRONGTYPE (the row); EMQSTALE fail token
-- mismatch; WRONGTYPE (active); EMQSTATE fail cancelled or EMQSTATE fail
-- not active; for a job that
-- dies the parents' refusals (lib.lua flow_finish); the lane accounting's
-- refusals; WRONGTYPE (delayed, dead, stats); the HINCRBY refusals (stats
-- failed, then retried or dead); the flow types' refusals (lib.lua
-- flow_types); with events, the events stream's refusals (lib.lua
-- ev_xadd). A job with a lane frees a slot of it (da = -1); a retried one
-- keeps its lane, and PROMOTE returns it there. A job that dies tells its
-- waiting parent (its policy) and pushes its outcome d<error> when waited.

local VERB = 'fail'
local refusal = shape(VERB, 6, 4) or layout(VERB, {'version', 'stats', 'active', 'delayed', 'dead'})
if refusal then return refusal end
local id = ARGV[1]
if not jobid(id) then return e_bad(VERB, 'id') end
local retry = ARGV[3]
if retry ~= '0' and retry ~= '1' then return e_bad(VERB, 'retry') end
if #ARGV[4] > MAX_TEXT then return e_bad(VERB, 'error') end
refusal = fence()
if refusal then return refusal end

local stats, active, delayed, dead = KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local row = KEYS[1] .. 'job:' .. id
if not may({row}, true, true) then return {err = E_NOPERM} end
local f = rpcall('HMGET', row, 'att', 'max', 'bo', 'lane', 'parent', 'onfail', 'wait', 'ev')
if f.err then return f end
if not f[1] then return 0 end
if f[1] ~= ARGV[2] then return e_stale(VERB) end
local score = rpcall('ZSCORE', active, id)
if type(score) == 'table' then return score end
if not score then return not_active(VERB, row) end
local att = rowint(f[1], MAX_ROW_INT)
local again = retry == '1' and att < rowint(f[2] or ROW_MAX, MAX_ROW_INT)
local acc = lane_acc()
local l = lane_name(f[4])
if l then lane_add(acc, l, 0, -1) end
local fa = flow_acc(acc)
if not again then
  flow_outcome(fa, id, f[7], 'd' .. ARGV[4])
  refusal = flow_finish(fa, id, f[5], 'd', ARGV[4], f[6])
  if refusal then return refusal end
end
refusal = lane_read(acc)
if refusal then return refusal end
local t = rpcall('ZCARD', delayed)
if type(t) == 'table' then return t end
t = rpcall('ZCARD', dead)
if type(t) == 'table' then return t end

local outcome = again and 'retried' or 'dead'
local c = rpcall('HMGET', stats, 'failed', outcome)
if c.err then return c end
refusal = hincr_refusal(c[1], 1) or hincr_refusal(c[2], 1)
if refusal then return refusal end
refusal = flow_types(fa, 1)
if refusal then return refusal end
local evs = {}
ev(evs, f[8], again and 'retrying' or 'dead', id, 'error', ARGV[4])
ev_flow(evs, fa)
refusal = ev_xadd(evs)
if refusal then return refusal end

-- the retry delay: fixed:<ms> waits ms, exponential:<ms> ms * 2^(att-1)
-- capped at a week (0 when ms is 0); a bo of another form waits 0
local delay = 0
if again then
  local kind, ms = match(f[3] or ROW_BO, '^(%a+):(.*)$')
  ms = ms and uint(ms, 0, MAX_BACKOFF)
  if ms and kind == 'fixed' then
    delay = ms
  elseif ms and ms > 0 and kind == 'exponential' then
    local e = att > 1 and att - 1 or 0
    delay = e >= 30 and MAX_RETRY_DELAY or ms * 2 ^ e
    if delay > MAX_RETRY_DELAY then delay = MAX_RETRY_DELAY end
  end
end

local now = now_ms()
rcall('ZREM', active, id)
if again then
  rcall('HSET', row, 'state', 'delayed', 'err', ARGV[4])
  rcall('ZADD', delayed, format('%d', now + delay), id)
else
  rcall('HSET', row, 'state', 'dead', 'err', ARGV[4])
  rcall('ZADD', dead, format('%d', now), id)
end
rcall('HINCRBY', stats, 'failed', 1)
rcall('HINCRBY', stats, outcome, 1)
local woke = flow_write(fa, now)
if lane_write(acc) then woke = true end
flow_push(fa)
if woke then signal_push(KEYS[1] .. 'signal') end
return again and 'retry' or 'dead'
