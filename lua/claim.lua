-- claim.lua: EMQ.CLAIM, lease up to count pending jobs, highest priority first.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:meta      hash, paused
-- KEYS[4] -> emq:{q}:pending   zset
-- KEYS[5] -> emq:{q}:active    zset, score = lease deadline ms
-- ARGV[1] -> lease_ms, 1..86400000
-- ARGV[2] -> count, 1..1000
--
-- Reply: array of [id, data, attempt] (bulk, bulk, integer) in pending order;
-- empty when the queue is paused or nothing is pending. A popped member that
-- is not an id, or whose row has no att, is dropped and not returned.
-- Refusals, in order: ERR EMQ claim numkeys must be 5; ERR EMQ claim wrong
-- number of arguments; ERR EMQ claim bad key layout; ERR EMQ claim bad
-- lease|count; the fence; WRONGTYPE (meta, pending, a row); ERR hash value
-- is not an integer or ERR increment or decrement would overflow (a row's
-- att); WRONGTYPE (active).

local VERB = 'claim'
local refusal = shape(VERB, 5, 2) or layout(VERB, {'version', 'meta', 'pending', 'active'})
if refusal then return refusal end
local lease = uint(ARGV[1], 1, MAX_LEASE)
if not lease then return e_bad(VERB, 'lease') end
local count = uint(ARGV[2], 1, MAX_COUNT)
if not count then return e_bad(VERB, 'count') end
refusal = fence()
if refusal then return refusal end

local base, pending, active = KEYS[1], KEYS[4], KEYS[5]
local paused = rpcall('HGET', KEYS[3], 'paused')
if type(paused) == 'table' then return paused end
if paused == '1' then return {} end
local ids = rpcall('ZRANGE', pending, 0, count - 1)
if ids.err then return ids end
if #ids == 0 then return {} end

-- the rows of the members that are ids, read then updated: the caller's ACL
-- on all first; the first denied one is refused where it would be read
local keys = {}
for i = 1, #ids do
  if jobid(ids[i]) then keys[#keys + 1] = base .. 'job:' .. ids[i] end
end
local deny, k = first_denied(keys, true, true), 0

-- rows[i] is {att, data} for an id whose row has att, else false
local rows = {}
for i = 1, #ids do
  local row = false
  if jobid(ids[i]) then
    k = k + 1
    if k == deny then return {err = E_NOPERM} end
    row = rpcall('HMGET', keys[k], 'att', 'data')
    if row.err then return row end
    if row[1] then
      refusal = hincr_refusal(row[1], 1)
      if refusal then return refusal end
    else
      row = false
    end
  end
  rows[i] = row
end
local t = rpcall('ZCARD', active)
if type(t) == 'table' then return t end

-- writes
local deadline = format('%d', now_ms() + lease)
rcall('ZPOPMIN', pending, #ids)
local out = {}
for i = 1, #ids do
  if rows[i] then
    local id = ids[i]
    local row = base .. 'job:' .. id
    local att = rcall('HINCRBY', row, 'att', 1)
    rcall('HSET', row, 'state', 'active')
    rcall('ZADD', active, deadline, id)
    out[#out + 1] = {id, rows[i][2], att}
  end
end
return out
