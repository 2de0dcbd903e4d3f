-- claim.lua: EMQ.CLAIM, lease up to count ready jobs: the jobs without a
-- lane (pending, highest priority first) and the ready lanes, by fair turns.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:meta      hash, paused, rate_max, rate_window, turn, pturn, lanewait, jobfields
-- KEYS[4] -> emq:{q}:pending   zset
-- KEYS[5] -> emq:{q}:active    zset, score = lease deadline ms
-- ARGV[1] -> lease_ms, 1..86400000
-- ARGV[2] -> count, 1..1000
-- ARGV[3] -> ext, optional: 1 asks for the extended rows, 0 (or absent) not
--
-- Without lanes (turns is empty) the jobs come in pending order. With lanes,
-- the participants (pending at meta pturn, each ready lane at its score in
-- turns) are ordered by turn, pending first at equal turn, and served one
-- job each per pass until count jobs are taken or none has a job left; each
-- participant served takes the number of its last turn, counted on from
-- meta turn (docs/PROTOCOL.md, "Fair claiming").
--
-- Reply: array of [id, data, attempt] (bulk, bulk, integer) in turn order,
-- with ext 1 [id, data, attempt, max, kind, timeout, headers] (max and
-- timeout integers, kind and headers bulk or null) from one wider HMGET
-- (of att data ev max only while meta jobfields is not 1: then kind and
-- headers are null and timeout 0, as for a row without them);
-- empty when the queue is paused or nothing is ready. A popped member that
-- is not an id, or whose row has no att, is dropped and not returned (it
-- used its turn).
-- Refusals, in order: ERR EMQ claim numkeys must be 5; ERR EMQ claim wrong
-- number of arguments; ERR EMQ claim bad key layout; ERR EMQ claim bad
-- lease|count|ext; the fence; WRONGTYPE (meta); with a rate NOPERM, WRONGTYPE
-- (rate), EMQRATE claim rate limited, retry in <ms> ms; WRONGTYPE (pending);
-- NOPERM, WRONGTYPE (turns); with lanes WRONGTYPE (turns), NOPERM (laneinfo,
-- lanes, lane:<l>), per lane WRONGTYPE (laneinfo, lane:<l>), per lane served
-- WRONGTYPE (lane:<l>); NOPERM, WRONGTYPE (a row); ERR hash value is not an
-- integer or ERR increment or decrement would overflow (a row's att);
-- WRONGTYPE (active, and lanes with lanes); for jobs with events, the
-- events stream's refusals (lib.lua ev_xadd).

local VERB = 'claim'
local refusal = shape(VERB, 5)
if not refusal and #ARGV ~= 2 and #ARGV ~= 3 then refusal = e_arity(VERB) end
refusal = refusal or layout(VERB, {'version', 'meta', 'pending', 'active'})
if refusal then return refusal end
local lease = uint(ARGV[1], 1, MAX_LEASE)
if not lease then return e_bad(VERB, 'lease') end
local count = uint(ARGV[2], 1, MAX_COUNT)
if not count then return e_bad(VERB, 'count') end
local ext = ARGV[3] or '0'
if ext ~= '0' and ext ~= '1' then return e_bad(VERB, 'ext') end
ext = ext == '1'
refusal = fence()
if refusal then return refusal end

local base, meta, pending, active = KEYS[1], KEYS[3], KEYS[4], KEYS[5]
local m = rpcall('HMGET', meta, 'paused', 'rate_max', 'rate_window', 'turn', 'pturn', 'lanewait', 'jobfields')
if m.err then return m end
if m[1] == '1' then return {} end
-- ext on a queue no job of which stored kind, timeout or headers (meta
-- jobfields not 1) reads max only: those fields reply as absent
local full = ext and m[7] == '1'

-- the rate window, which may refuse or cut count
local rmax, rwindow = rowint(m[2], MAX_ROW_INT), rowint(m[3], MAX_ROW_INT)
local rated, used, pttl = rmax > 0 and rwindow > 0, 0, 0
if rated then
  used, pttl = rate_read(rmax)
  if not used then return pttl end
  if count > rmax - used then count = rmax - used end
end

local ids = rpcall('ZRANGE', pending, 0, count - 1)
if ids.err then return ids end
local turns = base .. 'turns'
if not may({turns}, true, true) then return {err = E_NOPERM} end
local nturns = rpcall('ZCARD', turns)
if type(nturns) == 'table' then return nturns end
if #ids == 0 and nturns == 0 then return {} end

-- jobs[t] is the member of the t-th turn given, from[t] its participant
local jobs, from = {}, {}
local lanes, pend, T = {}, nil, 0
if nturns == 0 then
  for i = 1, #ids do jobs[i] = ids[i] end
else
  local tl = rpcall('ZRANGE', turns, 0, count - 1, 'WITHSCORES')
  if tl.err then return tl end
  local keys = {base .. 'laneinfo', base .. 'lanes'}
  for i = 1, #tl, 2 do
    lanes[#lanes + 1] = {name = tl[i], score = tonumber(tl[i + 1]), k = 0, got = 0}
    keys[#keys + 1] = base .. 'lane:' .. tl[i]
  end
  if first_denied(keys, true, true) then return {err = E_NOPERM} end
  for i = 1, #lanes do
    local e = lanes[i]
    local info, r = lane_info(e.name)
    if not info then return r end
    e.a, e.c, e.p, e.w = info.a, info.c, info.p, info.w
    e.ready = lane_ready(e.w, e.a, e.c, e.p)
    e.supply = 0
    if e.ready then
      e.supply = e.w
      if e.c > 0 and e.c - e.a < e.supply then e.supply = e.c - e.a end
    end
  end

  -- the participants in turn order: pending before the first lane whose
  -- turn is not below pturn
  local P = rowint(m[5], MAX_ROW_INT)
  T = rowint(m[4], MAX_ROW_INT)
  local order = {}
  if #ids > 0 then pend = {pending = true, supply = #ids, k = 0, got = 0} end
  for i = 1, #lanes do
    local e = lanes[i]
    if pend and not pend.placed and P <= e.score then
      order[#order + 1] = pend
      pend.placed = true
    end
    if e.supply > 0 then order[#order + 1] = e end
  end
  if pend and not pend.placed then order[#order + 1] = pend end

  -- passes: one job per participant per pass
  local taken = 0
  while taken < count and #order > 0 do
    local left = {}
    for i = 1, #order do
      local p = order[i]
      if taken < count then
        taken = taken + 1
        p.k = p.k + 1
        p.j = taken
        from[taken] = p
        jobs[taken] = p.k -- replaced by the member below
      end
      if p.k < p.supply then left[#left + 1] = p end
    end
    order = left
  end
  if taken == 0 then return {} end

  -- the members: pending's head as read, each lane served from its head
  for i = 1, #lanes do
    local e = lanes[i]
    if e.k > 0 then
      e.ids = rpcall('ZRANGE', base .. 'lane:' .. e.name, 0, e.k - 1)
      if e.ids.err then return e.ids end
    end
  end
  if pend then pend.ids = ids end
  for t = 1, taken do
    local p = from[t]
    jobs[t] = p.ids[jobs[t]]
  end
end

-- the rows of the members that are ids, read then updated: the caller's ACL
-- on all first; the first denied one is refused where it would be read
-- (at[t] is the index in keys of the t-th member's row)
local keys, at = {}, {}
for t = 1, #jobs do
  if jobid(jobs[t]) then
    keys[#keys + 1] = base .. 'job:' .. jobs[t]
    at[t] = #keys
  end
end
local deny = first_denied(keys, true, true)

-- rows[t] is {att, data, ev, key = the row} for a member whose row has
-- att, else false
local rows = {}
for t = 1, #jobs do
  local row, k = false, at[t]
  if k then
    if k == deny then return {err = E_NOPERM} end
    if full then
      row = rpcall('HMGET', keys[k], 'att', 'data', 'ev', 'max', 'kind', 'timeout', 'headers')
    elseif ext then
      row = rpcall('HMGET', keys[k], 'att', 'data', 'ev', 'max')
    else
      row = rpcall('HMGET', keys[k], 'att', 'data', 'ev')
    end
    if row.err then return row end
    if row[1] then
      refusal = hincr_refusal(row[1], 1)
      if refusal then return refusal end
      row.key = keys[k]
    else
      row = false
    end
  end
  rows[t] = row
end
local t = rpcall('ZCARD', active)
if type(t) == 'table' then return t end
if nturns > 0 then
  t = rpcall('ZCARD', base .. 'lanes')
  if type(t) == 'table' then return t end
end
local evs = {}
for i = 1, #jobs do
  if rows[i] and rows[i][3] then ev(evs, rows[i][3], 'claimed', jobs[i], 'att', format('%d', tonumber(rows[i][1]) + 1)) end
end
refusal = ev_xadd(evs)
if refusal then return refusal end

-- writes
local deadline = format('%d', now_ms() + lease)
if nturns == 0 then
  rcall('ZPOPMIN', pending, #ids)
else
  if pend and pend.k > 0 then rcall('ZPOPMIN', pending, pend.k) end
  for i = 1, #lanes do
    local e = lanes[i]
    if e.k > 0 then rcall('ZPOPMIN', base .. 'lane:' .. e.name, e.k) end
  end
end
local out = {}
for i = 1, #jobs do
  if rows[i] then
    local id, row = jobs[i], rows[i].key
    local att = rcall('HINCRBY', row, 'att', 1)
    rcall('HSET', row, 'state', 'active')
    rcall('ZADD', active, deadline, id)
    local r = rows[i]
    if full then
      out[#out + 1] = {id, r[2], att, rowint(r[4], MAX_ROW_INT), r[5], rowint(r[6], MAX_TIMEOUT), r[7]}
    elseif ext then
      out[#out + 1] = {id, r[2], att, rowint(r[4], MAX_ROW_INT), false, 0, false}
    else
      out[#out + 1] = {id, r[2], att}
    end
    if from[i] then from[i].got = from[i].got + 1 end
  end
end
if nturns > 0 then
  local W = rowint(m[6], MAX_ROW_INT)
  local laneinfo, lanes_key = base .. 'laneinfo', base .. 'lanes'
  local sumk = 0
  for i = 1, #lanes do
    local e = lanes[i]
    if e.k > 0 then
      sumk = sumk + e.k
      local a2, w2 = e.a + e.got, e.w - e.k
      if a2 ~= e.a then rcall('HSET', laneinfo, 'active:' .. e.name, format('%d', a2)) end
      if w2 == 0 and a2 == 0 then rcall('ZREM', lanes_key, e.name) end
      if lane_ready(w2, a2, e.c, e.p) then
        rcall('ZADD', turns, format('%d', T + e.j), e.name)
      else
        rcall('ZREM', turns, e.name)
      end
    elseif not e.ready then
      rcall('ZREM', turns, e.name)
    end
  end
  local fields = {'turn', format('%d', T + #jobs)}
  if pend and pend.k > 0 then
    fields[3], fields[4] = 'pturn', format('%d', T + pend.j)
  end
  local W2 = W - sumk
  if W2 < 0 then W2 = 0 end
  if W2 ~= W then
    fields[#fields + 1] = 'lanewait'
    fields[#fields + 1] = format('%d', W2)
  end
  rcall('HSET', meta, unpack(fields))
end
if rated and #out > 0 then rate_write(used, pttl, #out, rwindow) end
return out
