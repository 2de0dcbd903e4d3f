-- stats.lua: EMQ.STATS, the queue's sizes, pause flag and lifetime counters
-- (read-only).
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:meta      hash, paused
-- KEYS[4] -> emq:{q}:stats     hash, the counters
-- KEYS[5] -> emq:{q}:pending   zset
-- KEYS[6] -> emq:{q}:delayed   zset
-- KEYS[7] -> emq:{q}:active    zset
-- KEYS[8] -> emq:{q}:dead      zset
-- ARGV    -> none
--
-- Reply: flat array of names (bulk) and values: pending delayed active dead
-- (integers), paused (integer 0 or 1), then total_added total_completed
-- total_failed total_retried total_dead total_recovered total_removed
-- total_requeued total_trimmed total_cancelled (bulk strings as stored, 0 when absent), then
-- lanes (the lanes with jobs), lane_waiting (meta lanewait), rate_max and
-- rate_window (integers, 0 when unset), waiting and retained (ZCARD of
-- waiting and completed). pending counts the jobs without a lane.
-- Refusals, in order: ERR EMQ stats numkeys must be 8; ERR EMQ stats wrong
-- number of arguments; ERR EMQ stats bad key layout; the fence; WRONGTYPE
-- (pending, delayed, active, dead, meta, stats); NOPERM, WRONGTYPE (lanes);
-- NOPERM (waiting, completed), WRONGTYPE (waiting, completed).

local VERB = 'stats'
local refusal = shape(VERB, 8, 0)
    or layout(VERB, {'version', 'meta', 'stats', 'pending', 'delayed', 'active', 'dead'})
if refusal then return refusal end
refusal = fence()
if refusal then return refusal end

local out = {}
local sets = {'pending', 'delayed', 'active', 'dead'}
for i = 1, 4 do
  local n = rpcall('ZCARD', KEYS[4 + i])
  if type(n) == 'table' then return n end
  out[2 * i - 1], out[2 * i] = sets[i], n
end
local m = rpcall('HMGET', KEYS[3], 'paused', 'lanewait', 'rate_max', 'rate_window')
if m.err then return m end
out[9], out[10] = 'paused', m[1] == '1' and 1 or 0
local counters = {'added', 'completed', 'failed', 'retried', 'dead', 'recovered', 'removed', 'requeued', 'trimmed', 'cancelled'}
local c = rpcall('HMGET', KEYS[4], unpack(counters))
if c.err then return c end
for i = 1, #counters do
  out[9 + 2 * i], out[10 + 2 * i] = 'total_' .. counters[i], c[i] or '0'
end
local lanes = KEYS[1] .. 'lanes'
if not may({lanes}, true, false) then return {err = E_NOPERM} end
local nlanes = rpcall('ZCARD', lanes)
if type(nlanes) == 'table' then return nlanes end
local waiting, completed = KEYS[1] .. 'waiting', KEYS[1] .. 'completed'
if not may({waiting, completed}, true, false) then return {err = E_NOPERM} end
local nwaiting = rpcall('ZCARD', waiting)
if type(nwaiting) == 'table' then return nwaiting end
local nretained = rpcall('ZCARD', completed)
if type(nretained) == 'table' then return nretained end
local extras = {'lanes', nlanes, 'lane_waiting', rowint(m[2], MAX_ROW_INT), 'rate_max', rowint(m[3], MAX_ROW_INT),
  'rate_window', rowint(m[4], MAX_ROW_INT), 'waiting', nwaiting, 'retained', nretained}
for i = 1, #extras do out[#out + 1] = extras[i] end
return out
