-- add.lua: EMQ.ADD, add 1..1000 jobs, each pending or delayed.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:meta      hash, seq: the last id given; jobfields
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
-- with events on, the events stream's refusals (lib.lua ev_read).

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

-- the option names: each a known option, named once
local OPTIONS = {lane = true, parent = true, onfail = true, wait = true,
  due = true, timeout = true, kind = true, headers = true}
local cols = {}
for j = 1, nopt do
  local name = ARGV[2 + j]
  if not OPTIONS[name] or cols[name] then return e_bad(VERB, 'option') end
  cols[name] = j
end
local lanecol, parentcol, onfailcol, waitcol = cols.lane, cols.parent, cols.onfail, cols.wait
local duecol, timeoutcol, kindcol, headerscol = cols.due, cols.timeout, cols.kind, cols.headers

-- values, job by job; at[i] is the ARGV index of job i's data
local at, prios, delays, lanes = {}, {}, {}, {}
local parents, onfails, waits, depth, kids = {}, {}, {}, {}, {}
-- dues[i]: job i's due time when above 0; extra[i]: its kind, timeout and
-- headers row fields
local dues, extra = {}, {}
for i = 1, n do
  local a = 3 + nopt + per * (i - 1)
  at[i] = a
  local prio = uint(ARGV[a + 1], 0, MAX_PRIORITY)
  if not prio then return e_bad(VERB, 'priority') end
  local delay = uint(ARGV[a + 2], 0, MAX_DELAY)
  if not delay then return e_bad(VERB, 'delay') end
  if not uint(ARGV[a + 3], 1, MAX_ATTEMPTS) then return e_bad(VERB, 'attempts') end
  local backoff = ARGV[a + 4]
  if backoff ~= 'fixed' and backoff ~= 'exponential' then return e_bad(VERB, 'backoff') end
  if not uint(ARGV[a + 5], 0, MAX_BACKOFF) then return e_bad(VERB, 'backoff_ms') end
  local ukey = ARGV[a + 6]
  if #ukey > MAX_UNIQUE_KEY then return e_bad(VERB, 'unique_key') end
  local ttl = uint(ARGV[a + 7], 0, MAX_DELAY)
  if not ttl or (ttl == 0 and ukey ~= '') then return e_bad(VERB, 'unique_ttl') end
  prios[i], delays[i] = prio, delay
  if lanecol then
    local l = ARGV[a + 7 + lanecol]
    if #l > MAX_LANE_NAME then return e_bad(VERB, 'lane') end
    if l ~= '' then lanes[i] = l end
  end
  depth[i] = 1
  if parentcol then
    local pv = ARGV[a + 7 + parentcol]
    if pv ~= '' then
      local p = uint(pv, 1, i - 1)
      if not p or delays[p] ~= 0 or dues[p] or depth[p] >= MAX_FLOW_DEPTH then return e_bad(VERB, 'parent') end
      parents[i], depth[i] = p, depth[p] + 1
      if not kids[p] then kids[p] = {} end
      kids[p][#kids[p] + 1] = i
    end
  end
  if onfailcol then
    local o = ARGV[a + 7 + onfailcol]
    if o ~= '' and o ~= 'fail' and o ~= 'ignore' and o ~= 'continue' then return e_bad(VERB, 'onfail') end
    if parents[i] and (o == 'ignore' or o == 'continue') then onfails[i] = o end
  end
  if waitcol then
    local w = ARGV[a + 7 + waitcol]
    if w ~= '' then
      local ms = uint(w, 0, MAX_WAIT)
      if not ms then return e_bad(VERB, 'wait') end
      if ms > 0 then waits[i] = w end
    end
  end
  local x = {}
  if duecol then
    local d = ARGV[a + 7 + duecol]
    if d ~= '' then
      local ms = uint(d, 0, MAX_DUE)
      if not ms then return e_bad(VERB, 'due') end
      if ms > 0 then dues[i] = ms end
    end
  end
  if timeoutcol then
    local v = ARGV[a + 7 + timeoutcol]
    if v ~= '' then
      local ms = uint(v, 0, MAX_TIMEOUT)
      if not ms then return e_bad(VERB, 'timeout') end
      if ms > 0 then x.timeout = v end
    end
  end
  if kindcol then
    local v = ARGV[a + 7 + kindcol]
    if #v > MAX_KIND then return e_bad(VERB, 'kind') end
    if v ~= '' then x.kind = v end
  end
  if headerscol then
    local v = ARGV[a + 7 + headerscol]
    if #v > MAX_HEADERS then return e_bad(VERB, 'headers') end
    if v ~= '' then x.headers = v end
  end
  extra[i] = x
end

refusal = fence()
if refusal then return refusal end

local base, meta, stats, pending, delayed, signal = KEYS[1], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]

-- the ids: seq + 1 .. seq + n, predicted for HINCRBY meta seq n
local m = rpcall('HMGET', meta, 'seq', 'keep_done', 'keep_done_max', 'events_max', 'jobfields')
if m.err then return m end
-- a job storing kind, timeout or headers flags the queue (meta jobfields 1,
-- never cleared), so CLAIM with ext reads those fields from then on
local flag = false
if m[5] ~= '1' then
  for i = 1, n do
    if next(extra[i]) then
      flag = true
      break
    end
  end
end
-- events on: each new row carries the bound (ev), its transitions publish
local evmax = m[4] and uint(m[4], 1, MAX_EVENTS) and m[4]
local seq = m[1]
local keep = rowint(m[2], MAX_ROW_INT) > 0 or rowint(m[3], MAX_ROW_INT) > 0
refusal = hincr_refusal(seq, n)
if refusal then return refusal end
local first = seq and tonumber(seq) or 0 -- exact whenever the range below passes
if first < 0 or first + n > MAX_ID then return {err = E_ADD_ID_SPACE} end

local ids, rows = {}, {}
for i = 1, n do
  ids[i] = format('%d', first + i)
  rows[i] = base .. 'job:' .. ids[i]
end
-- the unique keys (read, then set) and the rows (created): the caller's ACL
-- on all first; a denied unique key is refused where it would be read, a
-- denied row where the rows' EXISTS would run
local keys = {}
for i = 1, n do
  if ARGV[at[i] + 6] ~= '' then keys[#keys + 1] = base .. 'unique:' .. ARGV[at[i] + 6] end
end
local nunique = #keys
for i = 1, n do keys[nunique + i] = rows[i] end
-- the new rows and each new parent's kids, results and failures: one EXISTS
local fresh = {}
for i = 1, n do fresh[i] = rows[i] end
for i = 1, n do
  if kids[i] then
    for _, s in ipairs({':kids', ':results', ':failures'}) do fresh[#fresh + 1] = rows[i] .. s end
  end
end
for i = n + 1, #fresh do keys[nunique + i] = fresh[i] end
local deny, k = first_denied(keys, true, true), 0

-- unique keys, job by job
local held = {}
for i = 1, n do
  local ukey = ARGV[at[i] + 6]
  if ukey ~= '' then
    if held[ukey] then return {err = E_ADD_DUPLICATE_IN_BATCH} end
    held[ukey] = true
    k = k + 1
    if k == deny then return {err = E_NOPERM} end
    local holder = rpcall('GET', keys[k])
    if type(holder) == 'table' then return holder end
    if holder then return e_add_duplicate(holder) end
  end
end

if deny and deny > nunique then return {err = E_NOPERM} end
if rcall('EXISTS', unpack(fresh)) ~= 0 then return {err = E_ADD_ID_EXISTS} end

-- the due times: with a due column the clock is read here, before the lane
-- accounting, since a due time not above now makes the job ready; later[i]
-- is job i's due time when it is delayed
local now, later = nil, {}
if duecol then now = now_ms() end
for i = 1, n do
  local d = delays[i] > 0 and delays[i]
  if dues[i] then
    local t = d and now + d or now
    if dues[i] > t then t = dues[i] end
    if t > now then d = t - now end
  end
  if d then later[i] = d end
end

-- the lanes of the jobs that wait in one now
local acc = lane_acc()
for i = 1, n do
  if lanes[i] and not later[i] and not kids[i] then lane_add(acc, lanes[i], 1, 0) end
end
refusal = lane_read(acc)
if refusal then return refusal end

-- types, and the counter
local added = rpcall('HGET', stats, 'added')
if type(added) == 'table' then return added end
refusal = hincr_refusal(added, n)
if refusal then return refusal end
local was_pending = rpcall('ZCARD', pending)
if type(was_pending) == 'table' then return was_pending end
local t = rpcall('ZCARD', delayed)
if type(t) == 'table' then return t end
local waiting = base .. 'waiting'
for i = 1, n do
  if kids[i] then
    t = rpcall('ZCARD', waiting)
    if type(t) == 'table' then return t end
    break
  end
end
t = rpcall('LLEN', signal)
if type(t) == 'table' then return t end
local evs = {}
if evmax then
  for i = 1, n do
    ev(evs, evmax, 'added', ids[i], 'state', (kids[i] and 'waiting') or (not later[i] and 'pending') or 'delayed')
  end
end
refusal = ev_read(VERB, evs)
if refusal then return refusal end

-- writes
now = now or now_ms()
local added_at = format('%d', now)
rcall('HINCRBY', meta, 'seq', n)
if flag then rcall('HSET', meta, 'jobfields', '1') end
local to_pending = false
for i = 1, n do
  local a = at[i]
  local state = (kids[i] and 'waiting') or (not later[i] and 'pending') or 'delayed'
  local fields = {'data', ARGV[a], 'state', state, 'att', '0',
    'max', ARGV[a + 3], 'prio', ARGV[a + 1], 'bo', ARGV[a + 4] .. ':' .. ARGV[a + 5], 'at', added_at}
  if ARGV[a + 6] ~= '' then
    fields[#fields + 1] = 'uniq'
    fields[#fields + 1] = ARGV[a + 6]
  end
  if lanes[i] then
    fields[#fields + 1] = 'lane'
    fields[#fields + 1] = lanes[i]
  end
  if keep then
    fields[#fields + 1] = 'keep'
    fields[#fields + 1] = '1'
  end
  if parents[i] then
    fields[#fields + 1] = 'parent'
    fields[#fields + 1] = ids[parents[i]]
  end
  if onfails[i] then
    fields[#fields + 1] = 'onfail'
    fields[#fields + 1] = onfails[i]
  end
  if kids[i] then
    fields[#fields + 1] = 'deps'
    fields[#fields + 1] = format('%d', #kids[i])
  end
  if waits[i] then
    fields[#fields + 1] = 'wait'
    fields[#fields + 1] = waits[i]
  end
  if evmax then
    fields[#fields + 1] = 'ev'
    fields[#fields + 1] = evmax
  end
  local x = extra[i]
  for _, name in ipairs({'kind', 'timeout', 'headers'}) do
    if x[name] then
      fields[#fields + 1] = name
      fields[#fields + 1] = x[name]
    end
  end
  rcall('HSET', rows[i], unpack(fields))
  if kids[i] then
    rcall('ZADD', waiting, ids[i], ids[i])
  elseif later[i] then
    rcall('ZADD', delayed, format('%d', now + later[i]), ids[i])
  elseif lanes[i] then
    rcall('ZADD', base .. 'lane:' .. lanes[i], pending_score(prios[i], first + i), ids[i])
  else
    rcall('ZADD', pending, pending_score(prios[i], first + i), ids[i])
    to_pending = true
  end
end
for i = 1, n do
  if kids[i] then
    local members = {}
    for _, c in ipairs(kids[i]) do
      members[#members + 1] = ids[c]
      members[#members + 1] = ids[c]
    end
    rcall('ZADD', rows[i] .. ':kids', unpack(members))
  end
end
for i = 1, n do
  local ukey = ARGV[at[i] + 6]
  if ukey ~= '' then
    rcall('SET', base .. 'unique:' .. ukey, ids[i], 'PX', ARGV[at[i] + 7])
  end
end
rcall('HINCRBY', stats, 'added', n)
local woke = lane_write(acc)
if (to_pending and was_pending == 0) or woke then signal_push(signal) end
ev_write(evs)
return ids
