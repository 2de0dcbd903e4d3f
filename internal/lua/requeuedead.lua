-- requeuedead.lua: EMQ.REQUEUEDEAD, REQUEUE for the dead jobs a filter
-- takes, walking dead oldest first, at most limit examined per call.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:stats     hash, counter requeued
-- KEYS[4] -> emq:{q}:pending   zset
-- KEYS[5] -> emq:{q}:dead      zset, score = time of death ms
-- KEYS[6] -> emq:{q}:signal    list
-- ARGV    -> limit after_score after_member min max lane error (a dead
--            filter, docs/PROTOCOL.md, "Dead filters")
--
-- Reply: [taken, examined, next_score, next_member].
-- Refusals, in order: ERR EMQ requeuedead numkeys must be 6; ERR EMQ
-- requeuedead wrong number of arguments; ERR EMQ requeuedead bad key
-- layout; ERR EMQ requeuedead bad limit|after|min|max|lane|error; the fence;
-- WRONGTYPE (dead); per member NOPERM, WRONGTYPE (its row); the
-- lane accounting's refusals (the lanes of the jobs taken); WRONGTYPE
-- (pending, signal, stats); the HINCRBY refusals (stats requeued); with
-- events, the events stream's refusals (lib.lua ev_xadd).

local VERB = 'requeuedead'
local refusal = shape(VERB, 6, 7) or layout(VERB, {'version', 'stats', 'pending', 'dead', 'signal'})
if refusal then return refusal end
local flt
flt, refusal = ops.filter(VERB)
if not flt then return refusal end
refusal = fence()
if refusal then return refusal end

local base, stats, pending, dead, signal = KEYS[1], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local ids, scores, more = ops.walk(dead, flt)
if not ids then return scores end
-- the rows of the members that are ids: the caller's ACL on all first; the
-- first denied one is refused where it would be read
local rows = {}
for i = 1, #ids do
  if jobid(ids[i]) then rows[#rows + 1] = base .. 'job:' .. ids[i] end
end
local deny, k = first_denied(rows, true, true), 0

local taken, acc, evs = {}, lane_acc(), {}
for i = 1, #ids do
  local id = ids[i]
  if jobid(id) then
    k = k + 1
    if k == deny then return {err = E_NOPERM} end
    local f = rpcall('HMGET', base .. 'job:' .. id, 'state', 'att', 'max', 'prio', 'lane', 'parent', 'onfail',
      'cfail', 'ev', 'err', 'cancelled')
    if f.err then return f end
    local l = lane_name(f[5])
    if f[2] and ops.match(flt, f[1], f[5], f[10]) then
      taken[#taken + 1] = {id = id, f = f, lane = l}
      if l then lane_add(acc, l, 1, 0) end
      ev(evs, f[9], 'requeued', id)
    end
  end
end
if #taken == 0 then return ops.reply(0, ids, scores, more) end
refusal = lane_read(acc)
if refusal then return refusal end
local was_pending = rpcall('ZCARD', pending)
if type(was_pending) == 'table' then return was_pending end
local t = rpcall('LLEN', signal)
if type(t) == 'table' then return t end
local c = rpcall('HGET', stats, 'requeued')
if type(c) == 'table' then return c end
refusal = hincr_refusal(c, #taken)
if refusal then return refusal end
refusal = ev_xadd(evs)
if refusal then return refusal end

local members = {}
for i = 1, #taken do members[i] = taken[i].id end
rcall('ZREM', dead, unpack(members))
local to_pending = false
for i = 1, #taken do
  local j, f = taken[i], taken[i].f
  local row = base .. 'job:' .. j.id
  rcall('HSET', row, 'state', 'pending', 'max', format('%d', rowint(f[2], MAX_ROW_INT) + rowint(f[3] or ROW_MAX, MAX_ROW_INT)))
  if f[6] or f[7] or f[8] or f[11] then rcall('HDEL', row, 'parent', 'onfail', 'cfail', 'cancelled') end
  local score = pending_score(rowint(f[4], MAX_PRIORITY), jobid(j.id))
  if j.lane then
    rcall('ZADD', base .. 'lane:' .. j.lane, score, j.id)
  else
    rcall('ZADD', pending, score, j.id)
    to_pending = true
  end
end
rcall('HINCRBY', stats, 'requeued', #taken)
local woke = lane_write(acc)
if (to_pending and was_pending == 0) or woke then signal_push(signal) end
return ops.reply(#taken, ids, scores, more)
