-- lib.lua: the library every verb script starts with (lua.Source prepends it).
--
-- It holds what docs/PROTOCOL.md states once for all verbs: the refusal texts
-- of protocol/errors.go, byte for byte (each spelled here and nowhere else),
-- the shape and layout checks, the argument integer rules, the fence, the
-- server's integer rules for predicting HINCRBY, the clock and the pending
-- score.
--
-- A helper that can refuse returns an error reply ({err = text}) or nil, and
-- a script returns the first one before its first write. Reads that also type
-- a key run with redis.pcall and their error reply (WRONGTYPE ...) is returned
-- unchanged: redis.call would append " script: <sha>, on @user_script:<n>."
--
-- Numbers are Lua doubles. Arguments have at most 15 digits and every score,
-- deadline and id stays below 2^53, so all are exact; they are sent to the
-- server with format('%d', x), never tostring (which rounds to 14 digits).

local rcall, rpcall = redis.call, redis.pcall
local find, sub, match, format = string.find, string.sub, string.match, string.format
local floor, tonumber, type, unpack = math.floor, tonumber, type, unpack

-- Value domains (protocol/verbs.go), inclusive.
local MAX_PRIORITY = 1000
local MAX_DELAY = 315360000000 -- delay and unique TTL, ms (ten years)
local MAX_ATTEMPTS = 1000000
local MAX_BACKOFF = 86400000
local MAX_RETRY_DELAY = 604800000
local MAX_LEASE = 86400000
local MAX_COUNT = 1000
local MAX_LOG_CAP = 10000
local MAX_UNIQUE_KEY = 512
local MAX_TEXT = 65536
local MAX_LANE_NAME = 128
local MAX_LANE_CAP = 1000000
local MAX_RATE_MAX = 1000000
local MAX_RATE_WINDOW = 86400000
local MAX_ADD_OPTIONS = 8
local MAX_ROW_INT = 999999999999999 -- the largest number a row field is read as
local STRIDE = 4398046511104 -- 2^42, protocol.PriorityStride
local MAX_ID = 4398046511103 -- 2^42 - 1, protocol.MaxJobID

-- Refusal texts ---------------------------------------------------------------
-- Fixed texts are strings (a script refuses with {err = E_...}); builders
-- return the error reply.

local E_WIRE_MISSING = 'EMQWIRE wire not installed'
local E_ADD_ID_EXISTS = 'EMQSTATE add id exists'
local E_ADD_ID_SPACE = 'EMQSTATE add id space exhausted'
local E_ADD_DUPLICATE_IN_BATCH = 'EMQLOCK add duplicate in batch'
local E_COMPLETEMANY_REPEATED = 'ERR EMQ completemany repeated id'
local E_REMOVE_ACTIVE = 'EMQSTATE remove job is active'
local E_REQUEUE_NOT_DEAD = 'EMQSTATE requeue not dead'
local E_HASH_NOT_INTEGER = 'ERR hash value is not an integer'
local E_OVERFLOW = 'ERR increment or decrement would overflow'
local E_NOPERM = 'NOPERM No permissions to access a key'

local function e_wire_found(found)
  return {err = 'EMQWIRE wire ' .. found .. ' found, 2 expected'}
end

local function e_rate_limited(ms)
  return {err = 'EMQRATE claim rate limited, retry in ' .. format('%d', ms) .. ' ms'}
end

local function e_add_duplicate(id)
  return {err = 'EMQLOCK add duplicate of ' .. id}
end

local function e_stale(verb)
  return {err = 'EMQSTALE ' .. verb .. ' token mismatch'}
end

local function e_not_active(verb)
  return {err = 'EMQSTATE ' .. verb .. ' not active'}
end

local function e_numkeys(verb, n)
  return {err = 'ERR EMQ ' .. verb .. ' numkeys must be ' .. n}
end

local function e_arity(verb)
  return {err = 'ERR EMQ ' .. verb .. ' wrong number of arguments'}
end

local function e_layout(verb)
  return {err = 'ERR EMQ ' .. verb .. ' bad key layout'}
end

local function e_bad(verb, name)
  return {err = 'ERR EMQ ' .. verb .. ' bad ' .. name}
end

local function e_not_after_top(verb)
  return {err = 'EMQSTATE ' .. verb .. ' id not after the stream top'}
end

local function e_kind(verb)
  return {err = 'EMQKIND ' .. verb .. ' wrong brand'}
end

-- Shape and layout ------------------------------------------------------------

-- shape refuses a key count other than nkeys, then (when nargs is given) an
-- ARGV count other than nargs. The server has already refused a numkeys that
-- is not an integer, is negative or passes the arguments (EVALSHA's texts).
local function shape(verb, nkeys, nargs)
  if #KEYS ~= nkeys then return e_numkeys(verb, nkeys) end
  if nargs and #ARGV ~= nargs then return e_arity(verb) end
end

-- layout refuses unless KEYS[1] is a queue base emq:{q}: (q is 1-128 bytes
-- without a brace) and KEYS[i + 1] is the base followed by suffixes[i].
local function layout(verb, suffixes)
  local base = KEYS[1]
  local n = #base
  if n < 8 or n > 135 or sub(base, 1, 5) ~= 'emq:{' or sub(base, -2) ~= '}:'
      or find(base, '[{}]', 6) ~= n - 1 then
    return e_layout(verb)
  end
  for i = 1, #suffixes do
    if KEYS[i + 1] ~= base .. suffixes[i] then return e_layout(verb) end
  end
end

-- Integers --------------------------------------------------------------------

-- uint is the value of s when s is a canonical non-negative decimal ('0', or a
-- digit 1-9 and at most 14 more digits) within lo..hi, else nil.
local function uint(s, lo, hi)
  local n
  if s == '0' then
    n = 0
  elseif #s <= 15 and find(s, '^[1-9]%d*$') then
    n = tonumber(s)
  else
    return nil
  end
  if n < lo or n > hi then return nil end
  return n
end

-- counted is the shape of a verb whose ARGV is a count n (1..MAX_COUNT) and
-- then n groups of per entries (ADD, COMPLETEMANY): it returns n, or nil and
-- the refusal (numkeys, no ARGV, bad count, an ARGV count other than 1 + per*n).
local function counted(verb, nkeys, per)
  local refusal = shape(verb, nkeys)
  if refusal then return nil, refusal end
  if #ARGV == 0 then return nil, e_arity(verb) end
  local n = uint(ARGV[1], 1, MAX_COUNT)
  if not n then return nil, e_bad(verb, 'count') end
  if #ARGV ~= 1 + per * n then return nil, e_arity(verb) end
  return n
end

-- jobid is the id a string names (an argument or a set member): a canonical
-- decimal in 1..2^42-1, else nil.
local function jobid(s)
  return uint(s, 1, MAX_ID)
end

-- rowint reads a numeric row field (att, max, prio) as the verbs write it: a
-- canonical decimal in 0..hi. Anything else, or an absent field, reads as 0.
local function rowint(v, hi)
  return v and uint(v, 0, hi) or 0
end

-- hincr_refusal predicts HINCRBY by incr (-1000..1000, not 0) on a field
-- holding v (false when absent) with the server's rules: the stored value
-- must pass string2ll (an optional '-', no leading zero, no '+' or space,
-- within int64), and the sum must stay within int64. Returns the server's
-- refusal, or nil.
local function hincr_refusal(v, incr)
  if not v or v == '0' then return nil end
  local neg = sub(v, 1, 1) == '-'
  local digits, limit, last = v, '9223372036854775807', 775807
  if neg then digits, limit, last = sub(v, 2), '9223372036854775808', 775808 end
  local nd = #digits
  if nd > 19 or not find(digits, '^[1-9]%d*$') or (nd == 19 and digits > limit) then
    return {err = E_HASH_NOT_INTEGER}
  end
  -- only a sum moving away from zero can pass a bound; both sides have 19
  -- digits, so comparing the strings compares the numbers
  if nd == 19 and (incr > 0) ~= neg
      and digits > '9223372036854' .. format('%06d', last - math.abs(incr)) then
    return {err = E_OVERFLOW}
  end
end

-- The caller's ACL on derived keys ---------------------------------------------
-- The server checks the declared keys before a script runs. Keys derived from
-- the base (job:<id>, job:<id>:logs, unique:<key>) are checked here, with the
-- access the native executor checks them with, before they are touched: a
-- denial is E_NOPERM in the place of the key's first read (or, for a key only
-- written, where the writes would start), and nothing is written. Without it
-- the server would deny the script's own call on the key, after earlier
-- writes. Read access is MGET's, write access DEL's, and both LMPOP's, so a
-- call that is allowed costs one check: the verbs check every derived key
-- they know of at once with both, and only when that is refused, each key
-- with the access it needs.

-- may reports whether the caller may read (r) and write (w) every one of keys.
local function may(keys, r, w)
  if r and w then
    local args = {#keys}
    for i = 1, #keys do args[i + 1] = keys[i] end
    args[#args + 1] = 'LEFT'
    return redis.acl_check_cmd('LMPOP', unpack(args))
  end
  if r then return redis.acl_check_cmd('MGET', unpack(keys)) end
  return redis.acl_check_cmd('DEL', unpack(keys))
end

-- first_denied is the index of the first of keys the caller may not touch
-- with r and w, or false: one check of all, and one by one only when that is
-- refused.
local function first_denied(keys, r, w)
  if #keys == 0 or may(keys, r, w) then return false end
  for i = 1, #keys do
    if not may({keys[i]}, r, w) then return i end
  end
  return false -- allowed one by one: the rules changed between the checks
end

-- Reads -----------------------------------------------------------------------

-- fence refuses unless the queue's version key (KEYS[2]) holds this wire.
local function fence()
  local v = rpcall('GET', KEYS[2])
  if v == '2' then return nil end
  if not v then return {err = E_WIRE_MISSING} end
  if type(v) == 'table' then return v end
  return e_wire_found(v)
end

-- now_ms is the server's clock in milliseconds. Each script reads it once.
local function now_ms()
  local t = rcall('TIME')
  return tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000)
end

-- Writes ----------------------------------------------------------------------

-- pending_score is a pending job's score as sent to ZADD: higher priority
-- first, then FIFO by id; below 1001 * 2^42, so exact.
local function pending_score(prio, id)
  return format('%d', (MAX_PRIORITY - prio) * STRIDE + id)
end

-- signal_push leaves one token in the signal list, for workers blocked on it.
local function signal_push(signal)
  rcall('LPUSH', signal, '1')
  rcall('LTRIM', signal, 0, 0)
end

-- Lanes -----------------------------------------------------------------------
-- docs/PROTOCOL.md, "Lanes". A call that changes lanes' waiting (dw) or
-- active (da) counts collects them with lane_add, in the order it first
-- meets each lane, reads them with lane_read after its domain reads and
-- before its types, and writes them with lane_write after its own writes.

-- lane_name is a row's lane field as read: 1..128 bytes, else no lane (nil).
local function lane_name(v)
  if v and #v > 0 and #v <= MAX_LANE_NAME then return v end
  return nil
end

-- lane_ready reports whether a lane of w waiting jobs, a active, cap c (0:
-- none) and paused flag p can be served.
local function lane_ready(w, a, c, p)
  return not p and w > 0 and (c == 0 or a < c)
end

-- lane_info reads lane l's HMGET laneinfo active:<l> cap:<l> paused:<l> and
-- ZCARD lane:<l>: it returns {a, c, p, w, cap = the stored cap field}, or
-- nil and the server's error reply.
local function lane_info(l)
  local base = KEYS[1]
  local f = rpcall('HMGET', base .. 'laneinfo', 'active:' .. l, 'cap:' .. l, 'paused:' .. l)
  if f.err then return nil, f end
  local w = rpcall('ZCARD', base .. 'lane:' .. l)
  if type(w) == 'table' then return nil, w end
  return {a = rowint(f[1], MAX_ROW_INT), c = rowint(f[2], MAX_ROW_INT), p = f[3] == '1', w = w, cap = f[2]}
end

-- lane_acc is an empty set of lane changes.
local function lane_acc()
  return {list = {}, by = {}, dwsum = 0}
end

-- lane_add adds the changes dw, da to lane l of acc.
local function lane_add(acc, l, dw, da)
  local e = acc.by[l]
  if not e then
    e = {name = l, dw = 0, da = 0}
    acc.by[l] = e
    acc.list[#acc.list + 1] = e
  end
  e.dw, e.da = e.dw + dw, e.da + da
  acc.dwsum = acc.dwsum + dw
end

-- lane_read is the lane accounting's reads for the lanes of acc: the ACL
-- check of laneinfo, lanes, turns, meta, signal and each lane:<l> (read and
-- write), each lane's laneinfo fields and size, then meta turn and
-- lanewait, ZCARD turns, ZCARD lanes and LLEN signal. It returns the
-- refusal, or nil; with no lane it reads nothing.
local function lane_read(acc)
  if #acc.list == 0 then return nil end
  local base = KEYS[1]
  local keys = {base .. 'laneinfo', base .. 'lanes', base .. 'turns', base .. 'meta', base .. 'signal'}
  for i = 1, #acc.list do keys[5 + i] = base .. 'lane:' .. acc.list[i].name end
  if first_denied(keys, true, true) then return {err = E_NOPERM} end
  for i = 1, #acc.list do
    local e = acc.list[i]
    local info, refusal = lane_info(e.name)
    if not info then return refusal end
    e.a, e.c, e.p, e.w, e.cap = info.a, info.c, info.p, info.w, info.cap
    e.c2, e.p2 = e.c, e.p -- the settings after the call; LANECAP, LANEPAUSE and LANERESUME change them
  end
  local m = rpcall('HMGET', base .. 'meta', 'turn', 'lanewait')
  if m.err then return m end
  acc.T, acc.W = rowint(m[1], MAX_ROW_INT), rowint(m[2], MAX_ROW_INT)
  local t = rpcall('ZCARD', base .. 'turns')
  if type(t) == 'table' then return t end
  acc.turns = t
  t = rpcall('ZCARD', base .. 'lanes')
  if type(t) == 'table' then return t end
  t = rpcall('LLEN', base .. 'signal')
  if type(t) == 'table' then return t end
end

-- lane_write is the lane accounting's writes for the lanes of acc, read by
-- lane_read. It returns true when a lane became ready while turns was
-- empty: the call then ends with signal-push.
local function lane_write(acc)
  if #acc.list == 0 then return false end
  local base = KEYS[1]
  local laneinfo, lanes, turns = base .. 'laneinfo', base .. 'lanes', base .. 'turns'
  local woke = false
  for i = 1, #acc.list do
    local e = acc.list[i]
    local l = e.name
    local w2, a2 = e.w + e.dw, e.a + e.da
    if w2 < 0 then w2 = 0 end
    if a2 < 0 then a2 = 0 end
    if a2 ~= e.a then
      if a2 > 0 then
        rcall('HSET', laneinfo, 'active:' .. l, format('%d', a2))
      else
        rcall('HDEL', laneinfo, 'active:' .. l)
      end
    end
    local had, has = e.w + e.a > 0, w2 + a2 > 0
    if has and not had then
      rcall('ZADD', lanes, 0, l)
    elseif had and not has then
      rcall('ZREM', lanes, l)
    end
    local was, is = lane_ready(e.w, e.a, e.c, e.p), lane_ready(w2, a2, e.c2, e.p2)
    if is and not was then
      rcall('ZADD', turns, format('%d', acc.T), l)
      if acc.turns == 0 then woke = true end
    elseif was and not is then
      rcall('ZREM', turns, l)
    end
  end
  local W2 = acc.W + acc.dwsum
  if W2 < 0 then W2 = 0 end
  if W2 ~= acc.W then rcall('HSET', base .. 'meta', 'lanewait', format('%d', W2)) end
  return woke
end

-- Rate limit --------------------------------------------------------------------

-- rate_read is CLAIM's read of the rate window when meta sets a rate of
-- rmax claims (both rate_max and rate_window above 0): the ACL check of
-- rate (read and write), GET rate and PTTL rate. It returns the claims
-- used in the open window (0 when none is open) and the PTTL, or nil and
-- the refusal (EMQRATE when the window is used up).
local function rate_read(rmax)
  local key = KEYS[1] .. 'rate'
  if not may({key}, true, true) then return nil, {err = E_NOPERM} end
  local v = rpcall('GET', key)
  if type(v) == 'table' then return nil, v end
  local pttl = rcall('PTTL', key)
  local used = 0
  if pttl > 0 then used = rowint(v, MAX_ROW_INT) end
  if used >= rmax then return nil, e_rate_limited(pttl) end
  return used, pttl
end

-- rate_write counts k claims in the window rate_read found: on in an open
-- one, else a new one of window ms.
local function rate_write(used, pttl, k, window)
  local key = KEYS[1] .. 'rate'
  if pttl > 0 then
    rcall('SET', key, format('%d', used + k), 'KEEPTTL')
  else
    rcall('SET', key, format('%d', k), 'PX', format('%d', window))
  end
end

-- Flows -------------------------------------------------------------------------
-- docs/PROTOCOL.md, "Flows". A call whose jobs finish (completed, died or
-- removed) tells their waiting parents with flow_finish during its reads
-- (after the job's own reads), types what the parents' writes need with
-- flow_types, and writes with flow_write after its own writes and before
-- the lane accounting writes; the waited outcomes (flow_outcome) are pushed
-- by flow_push after the lane accounting writes, before signal-push.

local MAX_RESULT = 1048576
local DEFAULT_RESULT = 262144
local MAX_FLOW_DEPTH = 16
local MAX_WAIT = 86400000
local MAX_KEEP_COUNT = 100000000
local DEFAULT_KEEP_DEAD = 100000
local E_REMOVE_HAS_CHILDREN = 'EMQSTATE remove has children'
local E_RESULT_TOO_LARGE = 'EMQSTATE complete result too large'

-- flow_acc is an empty set of parent changes; lanes is the call's lane
-- accounting (lane_acc), which counts the parents released to a lane.
local function flow_acc(lanes)
  return {lanes = lanes, by = {}, list = {}, outcomes = {}, ndead = 0, topending = false, checked = false}
end

-- flow_outcome queues the outcome text of job id whose row's wait field is
-- wait (as read): pushed only when wait reads as 1..MAX_WAIT.
local function flow_outcome(fa, id, wait, text)
  local ms = rowint(wait, MAX_WAIT)
  if ms > 0 then fa.outcomes[#fa.outcomes + 1] = {id = id, ms = ms, text = text} end
end

-- flow_finish tells the parent of child (its row's parent field as read,
-- pv) that the child finished: kind 'c' completed with result payload, 'd'
-- died with error payload (policy onfail as read), 'r' removed. It reads
-- the parent once per call (the ACL check of the flow keys before the first
-- parent, then per parent the check of its row, results and failures and
-- HMGET row att state deps cfail parent onfail lane prio wait ev) and, when the
-- parent is released and dies, tells its own parent in turn. Returns the
-- refusal or nil.
local function flow_finish(fa, child, pv, kind, payload, onfail)
  local p = jobid(pv or '') and pv
  if not p then return nil end
  local base = KEYS[1]
  if not fa.checked then
    fa.checked = true
    if first_denied({base .. 'waiting', base .. 'pending', base .. 'dead', base .. 'stats', base .. 'signal'},
        true, true) then
      return {err = E_NOPERM}
    end
  end
  local e = fa.by[p]
  if not e then
    local row = base .. 'job:' .. p
    if first_denied({row, row .. ':results', row .. ':failures'}, true, true) then return {err = E_NOPERM} end
    local f = rpcall('HMGET', row, 'att', 'state', 'deps', 'cfail', 'parent', 'onfail', 'lane', 'prio', 'wait', 'ev')
    if f.err then return f end
    e = {id = p, row = row, waiting = f[1] and f[2] == 'waiting', deps = f[3], cfail = f[4], parent = f[5],
      onfail = f[6], lane = lane_name(f[7]), prio = rowint(f[8], MAX_PRIORITY), wait = f[9], ev = f[10],
      k = 0, results = {}, failures = {}}
    fa.by[p] = e
    if e.waiting then fa.list[#fa.list + 1] = e end
  end
  if not e.waiting or e.released then return nil end
  e.k = e.k + 1
  local refusal = hincr_refusal(e.deps, -e.k)
  if refusal then return refusal end
  if kind == 'c' then
    if payload ~= '' then
      e.results[#e.results + 1] = child
      e.results[#e.results + 1] = payload
    end
  elseif kind == 'd' then
    if onfail == 'continue' then
      e.failures[#e.failures + 1] = child
      e.failures[#e.failures + 1] = payload
    elseif onfail ~= 'ignore' and not e.cfail then
      e.cfail, e.newcfail = child, true
    end
  end
  if e.deps and e.deps == format('%d', e.k) then
    e.released = true
    if e.cfail then
      e.err = 'child ' .. e.cfail .. ' failed'
      fa.ndead = fa.ndead + 1
      flow_outcome(fa, p, e.wait, 'd' .. e.err)
      return flow_finish(fa, p, e.parent, 'd', e.err, e.onfail)
    elseif e.lane then
      lane_add(fa.lanes, e.lane, 1, 0)
    else
      fa.topending = true
    end
  end
  return nil
end

-- flow_types types the keys the parents' writes need: each parent's
-- results and failures hashes it writes, waiting, pending and signal when a
-- parent goes to pending, dead and stats dead (predicted with own + the
-- parents that die) when one dies, and each outcome list (the ACL check of
-- done:<id>, write access, then LLEN). It sets fa.was_pending (ZCARD
-- pending). Returns the refusal or nil.
local function flow_types(fa, own_dead)
  local base = KEYS[1]
  for i = 1, #fa.list do
    local e = fa.list[i]
    if #e.results > 0 then
      local t = rpcall('HLEN', e.row .. ':results')
      if type(t) == 'table' then return t end
    end
    if #e.failures > 0 then
      local t = rpcall('HLEN', e.row .. ':failures')
      if type(t) == 'table' then return t end
    end
  end
  if #fa.list > 0 then
    local t = rpcall('ZCARD', base .. 'waiting')
    if type(t) == 'table' then return t end
  end
  if fa.topending then
    local t = rpcall('ZCARD', base .. 'pending')
    if type(t) == 'table' then return t end
    fa.was_pending = t
    t = rpcall('LLEN', base .. 'signal')
    if type(t) == 'table' then return t end
  end
  if fa.ndead > 0 then
    local t = rpcall('ZCARD', base .. 'dead')
    if type(t) == 'table' then return t end
    local c = rpcall('HGET', base .. 'stats', 'dead')
    if type(c) == 'table' then return c end
    local refusal = hincr_refusal(c, own_dead + fa.ndead)
    if refusal then return refusal end
  end
  for i = 1, #fa.outcomes do
    local key = base .. 'done:' .. fa.outcomes[i].id
    if not may({key}, true, true) then return {err = E_NOPERM} end
    local t = rpcall('LLEN', key)
    if type(t) == 'table' then return t end
  end
  return nil
end

-- flow_write writes the parents' changes, parent by parent in the order
-- met: HINCRBY row deps -k, HSET results, HSET failures, HSET row cfail;
-- then, for a released parent, ZREM waiting and HSET row state pending +
-- ZADD pending (or its lane), or HSET row state dead err + ZADD dead; then
-- HINCRBY stats dead <n>. It returns true when a parent went to pending
-- while pending was empty (the call then signals).
local function flow_write(fa, now)
  local base = KEYS[1]
  local died_at = format('%d', now)
  for i = 1, #fa.list do
    local e = fa.list[i]
    rcall('HINCRBY', e.row, 'deps', -e.k)
    if #e.results > 0 then rcall('HSET', e.row .. ':results', unpack(e.results)) end
    if #e.failures > 0 then rcall('HSET', e.row .. ':failures', unpack(e.failures)) end
    if e.newcfail then rcall('HSET', e.row, 'cfail', e.cfail) end
    if e.released then
      rcall('ZREM', base .. 'waiting', e.id)
      if e.err then
        rcall('HSET', e.row, 'state', 'dead', 'err', e.err)
        rcall('ZADD', base .. 'dead', died_at, e.id)
      else
        rcall('HSET', e.row, 'state', 'pending')
        local score = pending_score(e.prio, jobid(e.id))
        if e.lane then
          rcall('ZADD', base .. 'lane:' .. e.lane, score, e.id)
        else
          rcall('ZADD', base .. 'pending', score, e.id)
        end
      end
    end
  end
  if fa.ndead > 0 then rcall('HINCRBY', base .. 'stats', 'dead', fa.ndead) end
  return fa.topending and fa.was_pending == 0
end

-- flow_push pushes the waited outcomes: RPUSH done:<id> <outcome>, PEXPIRE
-- done:<id> <wait>.
local function flow_push(fa)
  local base = KEYS[1]
  for i = 1, #fa.outcomes do
    local o = fa.outcomes[i]
    local key = base .. 'done:' .. o.id
    rcall('RPUSH', key, o.text)
    rcall('PEXPIRE', key, format('%d', o.ms))
  end
end

-- Bus verbs -------------------------------------------------------------------
-- docs/PROTOCOL.md, "Bus verbs". One table, so the library's chunk keeps its
-- count of locals low.

local bus = {
  MAX_NAME = 128, -- protocol.MaxBusName
  MAX_FIELDS = 1000, -- protocol.MaxEntryFields
  MAX_EVENT = 128, -- protocol.MaxEventName
  MAX_PART = 999999999999999, -- protocol.MaxStreamPart
  MAX_TTL = 315360000000, -- protocol.MaxFailuresTTL
  LAST_ID = '18446744073709551615-18446744073709551615', -- no id after it
  E_NOT_INTEGER = 'ERR value is not an integer or out of range',
}

-- bus.layout refuses unless KEYS[1] is a base, KEYS[2] its version and
-- KEYS[3] the base, prefix and a bus name: 1..128 bytes of letters, digits
-- and - _ . : / @ (protocol.ValidBusName).
function bus.layout(verb, prefix)
  local refusal = layout(verb, {'version'})
  if refusal then return refusal end
  local head = KEYS[1] .. prefix
  local key = KEYS[3]
  local name = sub(key, #head + 1)
  if sub(key, 1, #head) ~= head or #name < 1 or #name > bus.MAX_NAME
      or find(name, '[^A-Za-z0-9%-_%.:/@]') then
    return e_layout(verb)
  end
end

-- bus.id splits an APPEND id, ms-seq with each half a canonical decimal of
-- at most 15 digits, not 0-0: the two halves as strings, or nil.
function bus.id(s)
  local ms, seq = match(s, '^(%d+)%-(%d+)$')
  if not ms or not uint(ms, 0, bus.MAX_PART) or not uint(seq, 0, bus.MAX_PART)
      or (ms == '0' and seq == '0') then
    return nil
  end
  return ms, seq
end

-- bus.less compares two canonical decimals of any length, exactly.
function bus.less(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end

-- bus.after reports whether id ms-seq is after id tms-tseq.
function bus.after(ms, seq, tms, tseq)
  if ms ~= tms then return bus.less(tms, ms) end
  return bus.less(tseq, seq)
end

-- bus.info reads a stream as the bus verbs do: EXISTS key, then, when it
-- exists, XINFO STREAM key (not a stream: WRONGTYPE as the server's). It
-- returns its last generated id and its first entry ({id, {f, v, ...}}, or
-- false when the stream is empty); '0-0' and false for an absent key; or
-- nil and the error.
function bus.info(key)
  if rcall('EXISTS', key) == 0 then return '0-0', false end
  local info = rpcall('XINFO', 'STREAM', key)
  if info.err then return nil, info end
  local top, first = nil, false
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then
      top = info[i + 1]
    elseif info[i] == 'first-entry' then
      first = info[i + 1]
    end
  end
  return top, first
end

-- bus.incr_refusal predicts INCR on a string holding v (false when absent)
-- with the server's rules: the stored value must pass string2ll, and 2^63-1
-- cannot be incremented. Returns INCR's own refusal, or nil.
function bus.incr_refusal(v)
  if not v or v == '0' then return nil end
  local digits, limit = v, '9223372036854775807'
  if sub(v, 1, 1) == '-' then digits, limit = sub(v, 2), '9223372036854775808' end
  local nd = #digits
  if nd > 19 or not find(digits, '^[1-9]%d*$') or (nd == 19 and digits > limit) then
    return {err = bus.E_NOT_INTEGER}
  end
  if v == '9223372036854775807' then return {err = E_OVERFLOW} end
end

-- Job events ------------------------------------------------------------------
-- docs/PROTOCOL.md, "Job events". A job added while the queue's meta
-- events_max is above 0 carries that bound in its row's ev field, and each
-- of its transitions is published to the queue's events stream in the same
-- call. A verb collects its events with ev (its own jobs, in reply or
-- argument order) and ev_flow (the parents released or dead), checks the
-- stream with ev_read after every other refusal, and writes the entries
-- with ev_write after every other write. A job without ev publishes
-- nothing and the stream is not touched for it.

local MAX_EVENTS = 1000000 -- protocol.MaxEventsLen

-- ev queues event name of job id, whose row's ev field reads as bound v
-- (a canonical decimal 1..MAX_EVENTS; anything else, or absent, is off),
-- with field value pairs.
local function ev(acc, v, name, id, ...)
  local max = v and uint(v, 1, MAX_EVENTS)
  if max then acc[#acc + 1] = {v, name, id, ...} end
end

-- ev_flow queues the events of the parents fa released, in the order met:
-- released (to pending or its lane) or dead (error child <c> failed).
local function ev_flow(acc, fa)
  for i = 1, #fa.list do
    local e = fa.list[i]
    if e.released then
      if e.err then ev(acc, e.ev, 'dead', e.id, 'error', e.err) else ev(acc, e.ev, 'released', e.id) end
    end
  end
end

-- ev_read checks the events stream before a call writes #acc > 0 events:
-- the ACL check of events (read and write), the stream reads of the bus
-- verbs (EXISTS, then XINFO STREAM: not a stream is WRONGTYPE), the brand of
-- its first entry (EMQKIND <verb> wrong brand) and room for #acc ids after
-- its top (EMQSTATE <verb> id not after the stream top). Returns the
-- refusal or nil. It does not use the bus table, whose functions every
-- script carrying it would build on each call.
local function ev_read(verb, acc)
  local n = #acc
  if n == 0 then return nil end
  local key = KEYS[1] .. 'events'
  if not may({key}, true, true) then return {err = E_NOPERM} end
  if rcall('EXISTS', key) == 0 then return nil end
  local info = rpcall('XINFO', 'STREAM', key)
  if info.err then return info end
  local top, first = '0-0', false
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then
      top = info[i + 1]
    elseif info[i] == 'first-entry' then
      first = info[i + 1]
    end
  end
  if first then
    local f = first[2]
    if type(f) ~= 'table' or f[1] ~= 'brand' or f[2] ~= 'emq' then
      return e_kind(verb)
    end
  end
  local ms, seq = match(top, '^(%d+)%-(%d+)$')
  if ms == '18446744073709551615' and #seq == 20
      and seq > '184467440737095' .. format('%05d', 51615 - n) then
    return e_not_after_top(verb)
  end
  return nil
end

-- ev_write writes the queued events, in order: XADD events MAXLEN ~ <ev> *
-- brand emq event <name> id <id> [field value ...].
local function ev_write(acc)
  local key = KEYS[1] .. 'events'
  for i = 1, #acc do
    local e = acc[i]
    rcall('XADD', key, 'MAXLEN', '~', e[1], '*', 'brand', 'emq', 'event', e[2], 'id', e[3], unpack(e, 4))
  end
end

-- Schedules -------------------------------------------------------------------
-- docs/PROTOCOL.md, "Schedules". One table, so the library's chunk keeps its
-- count of locals low.

local sched = {
  E_CHANGED = 'EMQSTALE schedule.fire schedule changed',
  E_NOT_DUE = 'EMQSTATE schedule.fire occurrence not due',
  E_OUTSIDE = 'EMQSTATE schedule.fire occurrence outside the schedule',
  E_BROKEN = 'EMQSTATE schedule.fire broken definition',
}
