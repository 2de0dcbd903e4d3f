-- lib.lua: the library every verb script starts with (lua.Source prepends the
-- definitions the script uses, and folds each upper-case constant bound to a
-- number or a plain string into the code as its value: lua.Fold).
--
-- It holds what docs/PROTOCOL.md states once for all verbs: the refusal texts
-- of internal/protocol/errors.go, byte for byte (each spelled here and nowhere else),
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
local ceil, floor, tonumber, type, unpack = math.ceil, math.floor, tonumber, type, unpack

-- Value domains (internal/protocol/verbs.go), inclusive.
local MAX_PRIORITY = 1000
local MAX_DELAY = 315360000000 -- delay and unique TTL, ms (ten years)
local MAX_ATTEMPTS = 1000000
local MAX_BACKOFF = 86400000
local MAX_RETRY_DELAY = 604800000
local MAX_LEASE = 86400000
local MAX_BLOCK = 86400000 -- CLAIM's block_ms
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
-- the values ADD leaves out of a row, which every reader reads for the field
-- absent from a present row (protocol.Default*)
local ROW_STATE = 'pending'
local ROW_MAX = '3'
local ROW_PRIO = '0'
local ROW_BO = 'exponential:1000'

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

-- succ is the decimal of the integer v + 1, v as hincr_refusal(v, 1)
-- passed it (false: absent, 0), exactly as HINCRBY would store it: the value
-- a write of the next attempt predicts, so one HSET stands for HINCRBY and
-- HSET.
local function succ(v)
  if not v then return '1' end
  if #v <= 15 then return format('%d', tonumber(v) + 1) end
  local neg = sub(v, 1, 1) == '-'
  local m = neg and sub(v, 2) or v
  -- the digit that changes, the ones after it turning over (9 to 0 up, 0
  -- to 9 down)
  local over = neg and '0' or '9'
  local i = #m
  while i > 0 and sub(m, i, i) == over do i = i - 1 end
  if i == 0 then return '1' .. string.rep('0', #m) end -- up only: down, m > 0
  m = sub(m, 1, i - 1) .. string.char(m:byte(i) + (neg and -1 or 1)) .. string.rep(neg and '9' or '0', #m - i)
  if neg then
    if sub(m, 1, 1) == '0' then m = sub(m, 2) end
    return '-' .. m
  end
  return m
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

-- signal_push leaves one token in the signal list, for workers blocked on
-- it, and announces it on the sharded channel of the same name, for the
-- workers of a partitioned queue, which subscribe instead of blocking; the
-- announcement is skipped when the caller's ACL may not publish it.
local function signal_push(signal)
  rcall('LPUSH', signal, '1')
  rcall('LTRIM', signal, 0, 0)
  if redis.acl_check_cmd('SPUBLISH', signal, '1') then rcall('SPUBLISH', signal, '1') end
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

-- lane_sets is the lane setting verbs' read of meta lanesets, the count of
-- the lanes with a cap or a pause: HGET meta lanesets, after lane_read
-- (which typed meta). It returns the count, read like a row's number (not a
-- canonical decimal or absent: 0), and the field.
local function lane_sets()
  local s = rcall('HGET', KEYS[1] .. 'meta', 'lanesets')
  return rowint(s, MAX_ROW_INT), s
end

-- lane_sets_write writes HSET meta lanesets when lane e's settings, read
-- (c, p) and after the call (c2, p2), change the count n (lane_sets) or the
-- field s does not hold it yet.
local function lane_sets_write(n, s, e)
  local had, has = e.c > 0 or e.p, e.c2 > 0 or e.p2
  if has and not had then
    n = n + 1
  elseif had and not has and n > 0 then
    n = n - 1
  end
  local v = format('%d', n)
  if s ~= v then rcall('HSET', KEYS[1] .. 'meta', 'lanesets', v) end
end

-- Rate limit --------------------------------------------------------------------

-- rate_entry reads a rate log member, <before>:<k>: the running count
-- before the entry in 15 digits, so that entries of one ms sort in the order
-- they were logged, and its claims like a row's number (0 when not).
local function rate_entry(m)
  local b, k = match(m, '^(%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d):(.*)$')
  if not b then return 0, 0 end
  return tonumber(b), rowint(k, MAX_ROW_INT)
end

-- rate_read is CLAIM's read of the rate log when meta sets a rate of rmax
-- claims per window ms (both above 0), at the call's clock now: the ACL
-- check of rate (read and write), then its first live entry (score above
-- now - window) and its last, each [member, score] or nil. It returns the
-- claims logged in the last window, the running count the next entry
-- starts at and its score (now, or the last entry's score rounded up when
-- that is later, at most a window ahead: scores never go down while the
-- clock steps back less than a window), or nil and the refusal (EMQRATE
-- when the window is used up, with the wait until the first live entry
-- leaves it).
local function rate_read(rmax, window, now)
  local key = KEYS[1] .. 'rate'
  if not may({key}, true, true) then return nil, {err = E_NOPERM} end
  local first = rpcall('ZRANGEBYSCORE', key, '(' .. format('%d', now - window), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if first.err then return nil, first end
  if #first == 0 then return 0, 0, now end
  local last = rcall('ZRANGE', key, -1, -1, 'WITHSCORES')
  local fb = rate_entry(first[1])
  local lb, lk = rate_entry(last[1])
  local next = lb + lk
  local used = next - fb
  if used < 0 then used = 0 end
  if used >= rmax then
    local wait = ceil(tonumber(first[2]) + window - now)
    if wait < 1 then wait = 1 elseif wait > window then wait = window end
    return nil, e_rate_limited(wait)
  end
  local at = ceil(tonumber(last[2]))
  if at < now then at = now elseif at > now + window then at = now + window end
  return used, next, at
end

-- rate_write logs k claims scored at, the entry's running count from
-- next: the entries out of the window at now go, and the log lives until
-- the new entry leaves it.
local function rate_write(next, k, window, now, at)
  local key = KEYS[1] .. 'rate'
  rcall('ZREMRANGEBYSCORE', key, '-inf', format('%d', now - window))
  rcall('ZADD', key, format('%d', at), format('%015d:%d', next, k))
  rcall('PEXPIREAT', key, format('%d', at + window))
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
-- argument order) and ev_flow (the parents released or dead), and after
-- every other refusal writes the entries with ev_xadd as its first writes,
-- whose failure is the call's refusal. A job without ev publishes nothing
-- and the stream is not touched for it. An event carries its job's kind.

local MAX_EVENTS = 1000000 -- protocol.MaxEventsLen
local MAX_ENTRY_EVENTS = 1000 -- protocol.MaxEntryEvents
local MAX_ENTRY_ARGS = 6000 -- protocol.MaxEntryArgs
local E_STREAM_EXHAUSTED = 'ERR The stream has exhausted the last possible ID, unable to add more items'

-- ev queues event name of job id, whose row's ev field reads as bound v
-- (a canonical decimal 1..MAX_EVENTS; anything else, or absent, is off),
-- with field f and its value x, or none, and the job's kind: kd when the
-- caller knows it (false: none), else, only for an event that is on, its
-- row's (HGET <base>job:<id> kind, a row the verb has read: absent is
-- none). acc holds the events' XADD pairs themselves, flat and in order
-- (event <name> id <id> [f x] [kind <k>]), acc.k of them and acc.n events,
-- so ev_xadd passes them on without a copy; its entries, acc.e of them, each
-- of at most MAX_ENTRY_EVENTS events and MAX_ENTRY_ARGS of their pairs'
-- arguments: each entry's first bound and first slot (acc.b1 for the
-- first entry, acc.bs[e] and acc.os[e] for a later one), the event count
-- of each entry before the last (acc.ns[e]), and the last's count and
-- arguments (acc.en, acc.ew); and the last bound that read as on
-- (acc.on), which the call's jobs mostly share.
local function ev(acc, v, name, id, f, x, kd)
  if not v then return end
  if v ~= acc.on then
    if not uint(v, 1, MAX_EVENTS) then return end
    acc.on = v
  end
  if kd == nil then kd = rcall('HGET', KEYS[1] .. 'job:' .. id, 'kind') end
  local w = 4
  if f then w = 6 end
  if kd then w = w + 2 end
  local k, n = acc.k or 0, acc.n or 0
  if n == 0 then
    acc.b1, acc.e, acc.en, acc.ew = v, 1, 0, 0
  elseif acc.en == MAX_ENTRY_EVENTS or acc.ew + w > MAX_ENTRY_ARGS then
    local e = acc.e + 1
    if e == 2 then acc.bs, acc.os, acc.ns = {}, {}, {} end
    acc.ns[e - 1], acc.bs[e], acc.os[e] = acc.en, v, k
    acc.e, acc.en, acc.ew = e, 0, 0
  end
  acc.en, acc.ew = acc.en + 1, acc.ew + w
  acc[k + 1], acc[k + 2], acc[k + 3], acc[k + 4] = 'event', name, 'id', id
  k = k + 4
  if f then
    acc[k + 1], acc[k + 2] = f, x
    k = k + 2
  end
  if kd then
    acc[k + 1], acc[k + 2] = 'kind', kd
    k = k + 2
  end
  acc.k = k
  acc.n = n + 1
end

-- ev_flow queues the events of the parents fa released, in the order met:
-- released (to pending or its lane) or dead (error child <c> failed), each
-- with its row's kind.
local function ev_flow(acc, fa)
  for i = 1, #fa.list do
    local e = fa.list[i]
    if e.released then
      if e.err then ev(acc, e.ev, 'dead', e.id, 'error', e.err) else ev(acc, e.ev, 'released', e.id) end
    end
  end
end

-- ev_xadd publishes acc's events, when it has any, after every other
-- refusal of the call and before its other writes: the ACL check of events
-- (read and write), then one XADD per entry (ev), in order, each trimmed
-- with its first event's bound: XADD events MAXLEN ~ <ev> * brand emq
-- event <name> id <id> [field value] [kind <k>] for an entry of one event;
-- XADD events MAXLEN ~ <ev> * brand emq n <count> event <name> id <id>
-- [field value] [kind <k>] event ... for more. The first XADD is the check: the
-- server's WRONGTYPE, or its text for a top at the last possible id, is
-- returned unchanged with nothing written. A call of several entries
-- first reads the top (EXISTS, XINFO STREAM FULL COUNT 1) and refuses with
-- that text when the top leaves no id for all of them, so no later XADD
-- can fail. Returns the refusal or nil. It does not use the bus table,
-- whose functions every script carrying it would build on each call.
local function ev_xadd(acc)
  if not acc.n then return nil end
  local key = KEYS[1] .. 'events'
  if not may({key}, true, true) then return {err = E_NOPERM} end
  local n = acc.e
  if n > 1 and rcall('EXISTS', key) == 1 then
    local info = rpcall('XINFO', 'STREAM', key, 'FULL', 'COUNT', 1)
    if info.err then return info end
    local top = '0-0'
    for i = 1, #info, 2 do
      if info[i] == 'last-generated-id' then top = info[i + 1] end
    end
    local ms, seq = match(top, '^(%d+)%-(%d+)$')
    if ms == '18446744073709551615' and #seq == 20
        and seq > '184467440737095' .. format('%05d', 51615 - n) then
      return {err = E_STREAM_EXHAUSTED}
    end
  end
  local call = rpcall
  for e = 1, n do
    local from, to, bound = 0, acc.k, acc.b1
    if e > 1 then from, bound = acc.os[e], acc.bs[e] end
    if e < n then to = acc.os[e + 1] end
    local count = acc.en
    if e < n then count = acc.ns[e] end
    local r
    if count == 1 then
      r = call('XADD', key, 'MAXLEN', '~', bound, '*', 'brand', 'emq', unpack(acc, from + 1, to))
    else
      r = call('XADD', key, 'MAXLEN', '~', bound, '*', 'brand', 'emq', 'n', format('%d', count), unpack(acc, from + 1, to))
    end
    if type(r) == 'table' then return r end
    -- past the first entry a failure contradicts the top read: raise it
    call = rcall
  end
  return nil
end

-- Operations --------------------------------------------------------------------
-- docs/PROTOCOL.md, "Operations". One table, as the bus verbs', so the
-- library's chunk keeps its count of locals low.

local ops = {
  MAX_SCORE = 9007199254740991, -- protocol.MaxScore, 2^53 - 1
  MAX_CLIP = 1024, -- protocol.MaxClip
  MAX_PREVIEW = 16384, -- protocol.MaxPreviewData
}

-- ops.score is s as a cursor's score or a filter's time: a canonical
-- decimal 0..2^53-1 (16 digits at most), else nil.
function ops.score(s)
  if s == '0' then return 0 end
  if #s > 16 or not find(s, '^[1-9]%d*$') then return nil end
  local n = tonumber(s)
  if n > ops.MAX_SCORE then return nil end
  return n
end

-- ops.cursor reads the cursor arguments after_score, after_member: it
-- returns true and the score (nil for no cursor), or false when they are
-- not a cursor.
function ops.cursor(s, m)
  if s == '' then return m == '', nil end
  local n = ops.score(s)
  if not n then return false end
  return true, n
end

-- ops.less compares two members as bytes, as a zset orders them (a Lua
-- string comparison follows the server's collation locale).
function ops.less(a, b)
  local n = #a
  if #b < n then n = #b end
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- ops.position is the place of cursor (score, member) in set: b, the
-- members before it, and e, the members up to it (b + 1 when the cursor is
-- on a member). With no cursor, b is card and e is 0. The caller has typed
-- set (ZCARD).
function ops.position(set, score, member, card)
  if not score then return card, 0 end
  local sc = rcall('ZSCORE', set, member)
  if sc and tonumber(sc) == score then
    local r = rcall('ZRANK', set, member)
    return r, r + 1
  end
  local s = format('%d', score)
  local lo = rcall('ZCOUNT', set, '-inf', '(' .. s)
  local g = rcall('ZCOUNT', set, s, s)
  -- the first rank of the group whose member is after member
  local i, j = 0, g
  while i < j do
    local mid = floor((i + j) / 2)
    local at = rcall('ZRANGE', set, lo + mid, lo + mid)[1]
    if ops.less(member, at) then j = mid else i = mid + 1 end
  end
  return lo + i, lo + i
end

-- ops.filter reads a dead filter's ARGV (limit after_score after_member min
-- max lane error) for verb: it returns the filter, or nil and the refusal.
function ops.filter(verb)
  local limit = uint(ARGV[1], 1, MAX_COUNT)
  if not limit then return nil, e_bad(verb, 'limit') end
  local ok, after = ops.cursor(ARGV[2], ARGV[3])
  if not ok then return nil, e_bad(verb, 'after') end
  local min = ops.score(ARGV[4])
  if not min then return nil, e_bad(verb, 'min') end
  local max = ops.score(ARGV[5])
  if not max then return nil, e_bad(verb, 'max') end
  if #ARGV[6] > MAX_LANE_NAME then return nil, e_bad(verb, 'lane') end
  if #ARGV[7] > MAX_TEXT then return nil, e_bad(verb, 'error') end
  return {limit = limit, after = after, member = ARGV[3], min = min, max = max, lane = ARGV[6], error = ARGV[7]}
end

-- ops.walk reads the members of dead a filter's call examines: ZCARD dead,
-- the cursor's position, then ZRANGE dead <s> <s + limit> WITHSCORES from
-- s = max(e, ZCOUNT dead -inf (min). It returns the members examined (at
-- most limit, each with a score at most max), their scores, and whether a
-- member after them is in range (the walk goes on); or nil and the error.
function ops.walk(dead, f)
  local card = rpcall('ZCARD', dead)
  if type(card) == 'table' then return nil, card end
  local _, e = ops.position(dead, f.after, f.member, card)
  local below = rcall('ZCOUNT', dead, '-inf', '(' .. format('%d', f.min))
  if below > e then e = below end
  local r = rcall('ZRANGE', dead, e, e + f.limit, 'WITHSCORES')
  local ids, scores, more = {}, {}, false
  for i = 1, #r, 2 do
    local sc = tonumber(r[i + 1])
    if sc > f.max then break end
    if #ids == f.limit then
      more = true
      break
    end
    ids[#ids + 1] = r[i]
    scores[#scores + 1] = sc
  end
  return ids, scores, more
end

-- ops.match reports whether a dead job's row, read as state, lane and err,
-- is taken by filter f.
function ops.match(f, state, lane, err)
  if state ~= 'dead' then return false end
  if f.lane ~= '' and lane ~= f.lane then return false end
  if f.error ~= '' and not (err and find(err, f.error, 1, true)) then return false end
  return true
end

-- ops.reply is a dead walk's reply: [taken, examined, next_score,
-- next_member], the next cursor the last member examined while the walk
-- goes on.
function ops.reply(taken, ids, scores, more)
  if not more then return {taken, #ids, false, false} end
  return {taken, #ids, scores[#scores], ids[#ids]}
end

-- Job options, rescheduling and cancellation ------------------------------------
-- docs/PROTOCOL.md, "Job options, rescheduling and cancellation".

local MAX_DUE = 253402300799999 -- protocol.MaxDueMS
local MAX_TIMEOUT = 86400000 -- protocol.MaxTimeoutMS
local MAX_KIND = 128 -- protocol.MaxKind
local MAX_HEADERS = 8192 -- protocol.MaxHeaders
local E_CANCEL_STATE = 'EMQSTATE cancel not cancellable'
local E_RESCHEDULE_STATE = 'EMQSTATE reschedule not pending or delayed'

-- not_active is the refusal of EXTEND, COMPLETE or FAIL whose job (row, read
-- as a hash already) is not in active: EMQSTATE <verb> cancelled when CANCEL
-- ended it (the row's cancelled field), else EMQSTATE <verb> not active. It
-- reads the field only on this path, so an accepted call costs nothing more.
local function not_active(verb, row)
  local c = rcall('HGET', row, 'cancelled')
  if c then return {err = 'EMQSTATE ' .. verb .. ' cancelled'} end
  return e_not_active(verb)
end

-- ADD's path ------------------------------------------------------------------
-- docs/PROTOCOL.md, "ADD". ADD and SCHEDULE.FIRE (whose jobs are a
-- schedule's template) add jobs with it: addp.job checks one job's values,
-- addp.read makes every read after the fence and returns the plan (or the
-- refusal), addp.write writes it. The caller reads and writes the jobs'
-- events (ev_xadd) itself, so that they are its first writes. A is the call's arguments in ADD's form: n k option names, then n
-- groups of 8 + k.

local addp = {
  -- ADD's option columns; every column's empty value means none
  known = {lane = true, parent = true, onfail = true, wait = true,
    due = true, timeout = true, kind = true, headers = true},
}

-- addp.cols reads the k option names from A[first]: each a known column,
-- named once. Returns the columns (name -> position 1..k), or nil and the
-- refusal.
function addp.cols(verb, A, first, k)
  local cols = {}
  for j = 1, k do
    local name = A[first + j - 1]
    if not addp.known[name] or cols[name] then return nil, e_bad(verb, 'option') end
    cols[name] = j
  end
  return cols
end

-- addp.new is an empty set of jobs with columns cols; per is the length of
-- a job's group (8 + k). The lists of the columns the call does not name
-- are one empty table, never written: a plain call makes no table per
-- column. The fields addp.read sets are named here too (false), so that
-- the table is made at its final size once.
function addp.new(cols, per)
  local none = {}
  local opts = (cols.timeout or cols.kind or cols.headers) and {} or none
  return {cols = cols, per = per, n = 0, at = {}, prios = {}, delays = {},
    lanes = cols.lane and {} or none, parents = cols.parent and {} or none,
    onfails = cols.onfail and {} or none, waits = cols.wait and {} or none,
    depth = cols.parent and {} or none, kids = cols.parent and {} or none,
    dues = cols.due and {} or none, opts = opts, extra = {}, anyopts = false,
    meta = false, stats = false, pending = false, delayed = false, signal = false, flag = false,
    evmax = false, keep = false, first = 0, ids = false, rows = false, now = false, acc = false,
    was_pending = 0, evs = false}
end

-- addp.job checks the values of job i, whose group starts at A[a] (its
-- data), and adds it to p. Returns the refusal, or nil.
function addp.job(verb, p, A, a, i)
  local cols = p.cols
  p.at[i] = a
  p.n = i
  local prio = uint(A[a + 1], 0, MAX_PRIORITY)
  if not prio then return e_bad(verb, 'priority') end
  local delay = uint(A[a + 2], 0, MAX_DELAY)
  if not delay then return e_bad(verb, 'delay') end
  if not uint(A[a + 3], 1, MAX_ATTEMPTS) then return e_bad(verb, 'attempts') end
  local backoff = A[a + 4]
  if backoff ~= 'fixed' and backoff ~= 'exponential' then return e_bad(verb, 'backoff') end
  if not uint(A[a + 5], 0, MAX_BACKOFF) then return e_bad(verb, 'backoff_ms') end
  local ukey = A[a + 6]
  if #ukey > MAX_UNIQUE_KEY then return e_bad(verb, 'unique_key') end
  local ttl = uint(A[a + 7], 0, MAX_DELAY)
  if not ttl or (ttl == 0 and ukey ~= '') then return e_bad(verb, 'unique_ttl') end
  p.prios[i], p.delays[i] = prio, delay
  if cols.lane then
    local l = A[a + 7 + cols.lane]
    if #l > MAX_LANE_NAME then return e_bad(verb, 'lane') end
    if l ~= '' then p.lanes[i], p.anyrow = l, true end
  end
  if cols.parent then
    p.depth[i] = 1
    local pv = A[a + 7 + cols.parent]
    if pv ~= '' then
      local q = uint(pv, 1, i - 1)
      if not q or p.delays[q] ~= 0 or p.dues[q] or p.depth[q] >= MAX_FLOW_DEPTH then return e_bad(verb, 'parent') end
      p.parents[i], p.depth[i], p.anyrow = q, p.depth[q] + 1, true
      if not p.kids[q] then p.kids[q] = {} end
      p.kids[q][#p.kids[q] + 1] = i
    end
  end
  if cols.onfail then
    local o = A[a + 7 + cols.onfail]
    if o ~= '' and o ~= 'fail' and o ~= 'ignore' and o ~= 'continue' then return e_bad(verb, 'onfail') end
    if p.parents[i] and (o == 'ignore' or o == 'continue') then p.onfails[i] = o end
  end
  if cols.wait then
    local w = A[a + 7 + cols.wait]
    if w ~= '' then
      local ms = uint(w, 0, MAX_WAIT)
      if not ms then return e_bad(verb, 'wait') end
      if ms > 0 then p.waits[i], p.anyrow = w, true end
    end
  end
  -- due (dues[i] when above 0), then the row fields kind, timeout, headers
  if cols.due then
    local d = A[a + 7 + cols.due]
    if d ~= '' then
      local ms = uint(d, 0, MAX_DUE)
      if not ms then return e_bad(verb, 'due') end
      if ms > 0 then p.dues[i] = ms end
    end
  end
  -- a job without any of the three leaves p.opts[i] nil: a plain job
  -- makes no table
  if not (cols.timeout or cols.kind or cols.headers) then return nil end
  local timeout, kind, headers
  if cols.timeout then
    local v = A[a + 7 + cols.timeout]
    if v ~= '' then
      local ms = uint(v, 0, MAX_TIMEOUT)
      if not ms then return e_bad(verb, 'timeout') end
      if ms > 0 then timeout = v end
    end
  end
  if cols.kind then
    local v = A[a + 7 + cols.kind]
    if #v > MAX_KIND then return e_bad(verb, 'kind') end
    if v ~= '' then kind = v end
  end
  if cols.headers then
    local v = A[a + 7 + cols.headers]
    if #v > MAX_HEADERS then return e_bad(verb, 'headers') end
    if v ~= '' then headers = v end
  end
  if timeout or kind or headers then
    p.opts[i], p.anyopts = {timeout = timeout, kind = kind, headers = headers}, true
  end
end

-- addp.read makes ADD's reads after the fence for the jobs of p, with the
-- queue's keys meta, stats, pending, delayed and signal, and queues their
-- added events in p.evs. Returns the refusal, or nil.
function addp.read(p, A, meta, stats, pending, delayed, signal)
  local base, n, at, kids = KEYS[1], p.n, p.at, p.kids
  p.meta, p.stats, p.pending, p.delayed, p.signal = meta, stats, pending, delayed, signal
  -- the ids: seq + 1 .. seq + n, predicted for HINCRBY meta seq n
  local m = rpcall('HMGET', meta, 'seq', 'keep_done', 'keep_done_max', 'events_max', 'jobfields', 'rowopts')
  if m.err then return m end
  -- a job storing kind, timeout or headers flags the queue (meta jobfields
  -- 1, never cleared), so CLAIM with ext reads those fields from then on
  p.flag = p.anyopts == true and m[5] ~= '1'
  -- events on: each new row carries the bound (ev), its transitions publish
  p.evmax = m[4] and uint(m[4], 1, MAX_EVENTS) and m[4]
  local seq = m[1]
  p.keep = rowint(m[2], MAX_ROW_INT) > 0 or rowint(m[3], MAX_ROW_INT) > 0
  -- a job storing lane, parent, deps, keep or wait flags the queue (meta
  -- rowopts 1, never cleared), so COMPLETE, COMPLETEMANY and CLAIM read
  -- those fields and ev from then on (p.anyrow: a job has a lane, a
  -- parent, so its parent deps, or a wait); jobs storing ev alone (events
  -- on) flag a queue marked 0 as having ev only (rowopts 2); the first
  -- rows of a queue (no rowopts: no job was ever added) mark it 2 or, when
  -- none stores any, as having none (rowopts 0)
  if p.anyrow or p.keep then
    p.rflag = m[6] ~= '1' and '1'
  elseif p.evmax then
    p.rflag = (not m[6] or m[6] == '0') and '2'
  else
    p.rflag = not m[6] and '0'
  end
  local refusal = hincr_refusal(seq, n)
  if refusal then return refusal end
  local first = seq and tonumber(seq) or 0 -- exact whenever the range below passes
  if first < 0 or first + n > MAX_ID then return {err = E_ADD_ID_SPACE} end
  p.first = first
  local ids, rows = {}, {}
  for i = 1, n do
    ids[i] = format('%d', first + i)
    rows[i] = base .. 'job:' .. ids[i]
  end
  p.ids, p.rows = ids, rows
  -- the unique keys (read, then set) and the rows (created): the caller's ACL
  -- on all first; a denied unique key is refused where it would be read, a
  -- denied row where the rows' EXISTS would run
  local keys = {}
  for i = 1, n do
    if A[at[i] + 6] ~= '' then keys[#keys + 1] = base .. 'unique:' .. A[at[i] + 6] end
  end
  local nunique = #keys
  for i = 1, n do keys[nunique + i] = rows[i] end
  -- the new rows and each new parent's kids, results and failures: one EXISTS
  local fresh = rows
  if p.cols.parent then
    fresh = {}
    for i = 1, n do fresh[i] = rows[i] end
    for i = 1, n do
      if kids[i] then
        for _, s in ipairs({':kids', ':results', ':failures'}) do fresh[#fresh + 1] = rows[i] .. s end
      end
    end
  end
  for i = n + 1, #fresh do keys[nunique + i] = fresh[i] end
  local deny, k = first_denied(keys, true, true), 0
  -- unique keys, job by job
  local held = {}
  for i = 1, n do
    local ukey = A[at[i] + 6]
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
  -- the due times: with a due column the clock is read here (p.now, the
  -- writes' time too), before the lane accounting, since a due time not
  -- above now makes the job ready; each due folds into the job's delay, so
  -- it runs at max(now + delay, due)
  if p.cols.due then
    local now = now_ms()
    p.now = now
    for i = 1, n do
      local due = p.dues[i]
      if due then
        local t = now + p.delays[i]
        if due > t then p.delays[i] = due - now end
      end
    end
  end
  -- the lanes of the jobs that wait in one now (a call without a lane
  -- column has none, and no accounting)
  if p.cols.lane then
    local acc = lane_acc()
    for i = 1, n do
      if p.lanes[i] and p.delays[i] == 0 and not kids[i] then lane_add(acc, p.lanes[i], 1, 0) end
    end
    p.acc = acc
    refusal = lane_read(acc)
    if refusal then return refusal end
  end
  -- types, and the counter
  local added = rpcall('HGET', stats, 'added')
  if type(added) == 'table' then return added end
  refusal = hincr_refusal(added, n)
  if refusal then return refusal end
  local was_pending = rpcall('ZCARD', pending)
  if type(was_pending) == 'table' then return was_pending end
  p.was_pending = was_pending
  local t = rpcall('ZCARD', delayed)
  if type(t) == 'table' then return t end
  for i = 1, n do
    if kids[i] then
      t = rpcall('ZCARD', base .. 'waiting')
      if type(t) == 'table' then return t end
      break
    end
  end
  t = rpcall('LLEN', signal)
  if type(t) == 'table' then return t end
  p.evs = {}
  if p.evmax then
    for i = 1, n do
      local o = p.opts[i]
      ev(p.evs, p.evmax, 'added', ids[i], 'state', addp.state(p, i), o and o.kind or false)
    end
  end
end

-- addp.state is the state job i of p is added in.
function addp.state(p, i)
  return (p.kids[i] and 'waiting') or (p.delays[i] == 0 and 'pending') or 'delayed'
end

-- addp.write writes the jobs p's reads planned, at server time now (the
-- caller passes p.now when the reads read the clock); a job's kind, timeout
-- and headers follow ev in its row, and a job i with p.extra[i] (field
-- value pairs) gets them last.
function addp.write(p, A, now)
  local base, n, at, kids, ids, rows = KEYS[1], p.n, p.at, p.kids, p.ids, p.rows
  local added_at = format('%d', now)
  rcall('HINCRBY', p.meta, 'seq', n)
  if p.flag then rcall('HSET', p.meta, 'jobfields', '1') end
  if p.rflag then rcall('HSET', p.meta, 'rowopts', p.rflag) end
  -- a job of a call naming no option column, on a queue without
  -- retention, and without extra fields, is a plain row: written from the
  -- arguments, with no list of its fields (and ev last, with events on);
  -- one whose fields all hold their defaults (state pending, max 3, prio
  -- 0, bo exponential:1000), which the row leaves out, is data att at
  -- [uniq] [ev]
  local bare, evmax = next(p.cols) == nil and not p.keep, p.evmax
  local to_pending = false
  for i = 1, n do
    local a = at[i]
    if bare and not p.extra[i] and p.delays[i] == 0 and A[a + 3] == ROW_MAX and A[a + 1] == ROW_PRIO
      and A[a + 4] .. ':' .. A[a + 5] == ROW_BO then
      if A[a + 6] == '' then
        if evmax then
          rcall('HSET', rows[i], 'data', A[a], 'att', '0', 'at', added_at, 'ev', evmax)
        else
          rcall('HSET', rows[i], 'data', A[a], 'att', '0', 'at', added_at)
        end
      elseif evmax then
        rcall('HSET', rows[i], 'data', A[a], 'att', '0', 'at', added_at, 'uniq', A[a + 6], 'ev', evmax)
      else
        rcall('HSET', rows[i], 'data', A[a], 'att', '0', 'at', added_at, 'uniq', A[a + 6])
      end
    else
      -- data [state] att [max] [prio] [bo] at: each left out at its default;
      -- the table is made at the size of the seven fields (the rest grow it),
      -- and only its first nf entries are sent
      local fields, nf = {'data', A[a], false, false, false, false, false, false, false, false, false, false,
        false, false}, 2
      local state = addp.state(p, i)
      if state ~= ROW_STATE then fields[3], fields[4], nf = 'state', state, 4 end
      fields[nf + 1], fields[nf + 2], nf = 'att', '0', nf + 2
      if A[a + 3] ~= ROW_MAX then fields[nf + 1], fields[nf + 2], nf = 'max', A[a + 3], nf + 2 end
      if A[a + 1] ~= ROW_PRIO then fields[nf + 1], fields[nf + 2], nf = 'prio', A[a + 1], nf + 2 end
      local bo = A[a + 4] .. ':' .. A[a + 5]
      if bo ~= ROW_BO then fields[nf + 1], fields[nf + 2], nf = 'bo', bo, nf + 2 end
      fields[nf + 1], fields[nf + 2], nf = 'at', added_at, nf + 2
      if A[a + 6] ~= '' then
        fields[nf + 1], fields[nf + 2], nf = 'uniq', A[a + 6], nf + 2
      end
      if p.lanes[i] then
        fields[nf + 1], fields[nf + 2], nf = 'lane', p.lanes[i], nf + 2
      end
      if p.keep then
        fields[nf + 1], fields[nf + 2], nf = 'keep', '1', nf + 2
      end
      if p.parents[i] then
        fields[nf + 1], fields[nf + 2], nf = 'parent', ids[p.parents[i]], nf + 2
      end
      if p.onfails[i] then
        fields[nf + 1], fields[nf + 2], nf = 'onfail', p.onfails[i], nf + 2
      end
      if kids[i] then
        fields[nf + 1], fields[nf + 2], nf = 'deps', format('%d', #kids[i]), nf + 2
      end
      if p.waits[i] then
        fields[nf + 1], fields[nf + 2], nf = 'wait', p.waits[i], nf + 2
      end
      if p.evmax then
        fields[nf + 1], fields[nf + 2], nf = 'ev', p.evmax, nf + 2
      end
      local x = p.opts[i]
      if x then
        if x.kind then fields[nf + 1], fields[nf + 2], nf = 'kind', x.kind, nf + 2 end
        if x.timeout then fields[nf + 1], fields[nf + 2], nf = 'timeout', x.timeout, nf + 2 end
        if x.headers then fields[nf + 1], fields[nf + 2], nf = 'headers', x.headers, nf + 2 end
      end
      local extra = p.extra[i]
      if extra then
        for j = 1, #extra do fields[nf + j] = extra[j] end
        nf = nf + #extra
      end
      rcall('HSET', rows[i], unpack(fields, 1, nf))
    end
    if kids[i] then
      rcall('ZADD', base .. 'waiting', ids[i], ids[i])
    elseif p.delays[i] ~= 0 then
      rcall('ZADD', p.delayed, format('%d', now + p.delays[i]), ids[i])
    elseif p.lanes[i] then
      rcall('ZADD', base .. 'lane:' .. p.lanes[i], pending_score(p.prios[i], p.first + i), ids[i])
    else
      rcall('ZADD', p.pending, pending_score(p.prios[i], p.first + i), ids[i])
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
    local ukey = A[at[i] + 6]
    if ukey ~= '' then
      rcall('SET', base .. 'unique:' .. ukey, ids[i], 'PX', A[at[i] + 7])
    end
  end
  rcall('HINCRBY', p.stats, 'added', n)
  local woke = p.acc and lane_write(p.acc)
  if (to_pending and p.was_pending == 0) or woke then signal_push(p.signal) end
end

-- Schedules -------------------------------------------------------------------
-- docs/PROTOCOL.md, "Schedules". One table, so the library's chunk keeps its
-- count of locals low.

local sched = {
  E_CHANGED = 'EMQSTALE schedule.fire schedule changed',
  E_NOT_DUE = 'EMQSTATE schedule.fire occurrence not due',
  E_OUTSIDE = 'EMQSTATE schedule.fire occurrence outside the schedule',
  E_BROKEN = 'EMQSTATE schedule.fire broken definition',
  MAX_ID = 128, -- protocol.MaxScheduleID
  MAX_SPEC = 256, -- protocol.MaxCronSpec
  MAX_TZ = 64, -- protocol.MaxTimeZone
  MAX_JITTER = 86400000,
  MAX_TIME = 253402300799999, -- protocol.MaxScheduleTime
  MAX_LIMIT = 1000000000000, -- protocol.MaxScheduleLimit: the cap, and a revision
  MAX_GRACE = 86400000,
  FIXED = 17, -- a definition's elements before its option pairs (kind .. k)
}

-- sched.id reports whether s is a schedule id: 1..128 bytes of letters,
-- digits and - _ . : / @.
function sched.id(s)
  return #s >= 1 and #s <= sched.MAX_ID and not find(s, '[^A-Za-z0-9%-_%.:/@]')
end

-- sched.state reads a state field v (false when absent) as {rev, count,
-- last, next, paused}: each space-separated part read like a row's number.
function sched.state(v)
  local parts, pos = {}, 1
  for i = 1, 5 do
    local sp = find(v, ' ', pos, true)
    local part = sub(v, pos, (sp or 0) - 1)
    parts[i] = rowint(part, MAX_ROW_INT)
    if not sp then
      for j = i + 1, 5 do parts[j] = 0 end
      break
    end
    pos = sp + 1
  end
  return {rev = parts[1], count = parts[2], last = parts[3], next = parts[4], paused = parts[5] == 1}
end

-- sched.fmt is the state field of st.
function sched.fmt(st)
  return format('%d %d %d %d %d', st.rev, st.count, st.last, st.next, st.paused and 1 or 0)
end

-- sched.encode is a definition: each element's length, ':', its bytes.
function sched.encode(A, from, to)
  local out = {}
  for i = from, to do out[#out + 1] = #A[i] .. ':' .. A[i] end
  return table.concat(out)
end

-- sched.decode is the elements of a definition, or nil when v is not one.
function sched.decode(v)
  local out, pos, n = {}, 1, #v
  while pos <= n do
    local colon = find(v, ':', pos, true)
    if not colon then return nil end
    local len = uint(sub(v, pos, colon - 1), 0, MAX_ROW_INT)
    if not len or colon + len > n then return nil end
    out[#out + 1] = sub(v, colon + 1, colon + len)
    pos = colon + len + 1
  end
  return out
end

-- sched_check checks a definition whose elements are D[o + 1] (kind) ..
-- D[o + 17 + 2k] with SCHEDULE.SET's value rules, naming verb in the
-- refusal. It returns the definition's numbers and its template as one
-- ADD job ({def, p, group}: p as addp.new, group the job's ADD group with
-- delay 0), or nil and the refusal.
local function sched_check(verb, D, o)
  local kind, spec, tz = D[o + 1], D[o + 2], D[o + 3]
  if kind ~= 'cron' and kind ~= 'every' then return nil, e_bad(verb, 'kind') end
  if kind == 'cron' then
    if #spec < 1 or #spec > sched.MAX_SPEC then return nil, e_bad(verb, 'spec') end
    if #tz > sched.MAX_TZ then return nil, e_bad(verb, 'tz') end
  else
    if not uint(spec, 1, MAX_DELAY) then return nil, e_bad(verb, 'spec') end
    if tz ~= '' then return nil, e_bad(verb, 'tz') end
  end
  local def = {}
  def.jitter = uint(D[o + 4], 0, sched.MAX_JITTER)
  if not def.jitter then return nil, e_bad(verb, 'jitter') end
  def.start = uint(D[o + 5], 0, sched.MAX_TIME)
  if not def.start then return nil, e_bad(verb, 'start') end
  def['end'] = uint(D[o + 6], 0, sched.MAX_TIME)
  if not def['end'] or (def['end'] > 0 and def['end'] < def.start) then return nil, e_bad(verb, 'end') end
  def.limit = uint(D[o + 7], 0, sched.MAX_LIMIT)
  if not def.limit then return nil, e_bad(verb, 'limit') end
  if not uint(D[o + 8], 0, sched.MAX_GRACE) then return nil, e_bad(verb, 'grace') end
  if not uint(D[o + 9], 0, MAX_COUNT) then return nil, e_bad(verb, 'catchup') end
  local k = uint(D[o + 17], 0, MAX_ADD_OPTIONS)
  if not k then return nil, e_bad(verb, 'options') end
  if #D - o ~= sched.FIXED + 2 * k then return nil, e_arity(verb) end
  -- the template: ADD's group data priority delay attempts backoff
  -- backoff_ms unique_key unique_ttl, then the option values
  local group = {D[o + 10], D[o + 11], '0', D[o + 12], D[o + 13], D[o + 14], D[o + 15], D[o + 16]}
  local names = {}
  for j = 1, k do
    names[j] = D[o + 16 + 2 * j]
    group[8 + j] = D[o + 17 + 2 * j]
    if names[j] == 'parent' or names[j] == 'onfail' or names[j] == 'due' then return nil, e_bad(verb, 'option') end
  end
  local cols, refusal = addp.cols(verb, names, 1, k)
  if not cols then return nil, refusal end
  local p = addp.new(cols, 8 + k)
  refusal = addp.job(verb, p, group, 1, 1)
  if refusal then return nil, refusal end
  def.ukey = D[o + 15]
  return {def = def, p = p, group = group, k = k, cols = cols}
end

-- Promoting -----------------------------------------------------------------
-- docs/PROTOCOL.md, PROMOTE and PROMOTEALL: once the delayed members ids are
-- read, the same reads, refusals and writes move them to pending.

-- promote_ids moves the delayed members ids of a queue to pending (a job
-- with a lane to its lane): it returns the number of jobs moved, or a
-- refusal table with nothing written.
local function promote_ids(verb, base, ids, pending, delayed, signal)
  local refusal
  -- the rows of the members that are ids, read then updated: the caller's ACL
  -- on all first; the first denied one is refused where it would be read
  local keys = {}
  for i = 1, #ids do
    if jobid(ids[i]) then keys[#keys + 1] = base .. 'job:' .. ids[i] end
  end
  local deny, k = first_denied(keys, true, true), 0

  -- scores[i] is the pending score of a job that moves, else nil
  local scores, moved, lanes, evs = {}, 0, {}, {}
  local acc = lane_acc()
  for i = 1, #ids do
    local id = jobid(ids[i])
    if id then
      k = k + 1
      if k == deny then return {err = E_NOPERM} end
      local f = rpcall('HMGET', keys[k], 'att', 'prio', 'lane', 'ev')
      if f.err then return f end
      if f[1] then
        scores[i] = pending_score(rowint(f[2], MAX_PRIORITY), id)
        moved = moved + 1
        lanes[i] = lane_name(f[3])
        if lanes[i] then lane_add(acc, lanes[i], 1, 0) end
        ev(evs, f[4], 'promoted', ids[i])
      end
    end
  end
  refusal = lane_read(acc)
  if refusal then return refusal end
  local was_pending = rpcall('ZCARD', pending)
  if type(was_pending) == 'table' then return was_pending end
  local t = rpcall('LLEN', signal)
  if type(t) == 'table' then return t end
  refusal = ev_xadd(evs)
  if refusal then return refusal end

  rcall('ZREM', delayed, unpack(ids))
  local to_pending = false
  for i = 1, #ids do
    if scores[i] then
      rcall('HSET', base .. 'job:' .. ids[i], 'state', 'pending')
      if lanes[i] then
        rcall('ZADD', base .. 'lane:' .. lanes[i], scores[i], ids[i])
      else
        rcall('ZADD', pending, scores[i], ids[i])
        to_pending = true
      end
    end
  end
  local woke = lane_write(acc)
  if (to_pending and was_pending == 0) or woke then signal_push(signal) end
  return moved
end

-- row_opts tells which of lane, parent, deps, keep, wait and ev the rows
-- of a queue may hold (docs/PROTOCOL.md, "The queue's row flag"), for a
-- verb that does not declare meta: after the caller's ACL on it (read),
-- meta rowopts 0 or absent (no job was ever added: ADD writes it with a
-- queue's first rows) is none (false), 2 ev alone ('ev'); a denied meta,
-- one that is not a hash, and a flag of other bytes read as all (true):
-- every field is read, and nothing is refused. readable: the caller's ACL
-- on meta is known to allow it.
local function row_opts(meta, readable)
  if not readable and not may({meta}, true, false) then return true end
  local v = rpcall('HGET', meta, 'rowopts')
  if not v or v == '0' then return false end
  return v ~= '2' or 'ev'
end

-- row_fields reads the fields COMPLETE and COMPLETEMANY take of a job's
-- row as ro (row_opts) says the row may hold them: att uniq, then lane
-- parent keep wait ev deps, or ev and kind alone: ev in its place (the 7th;
-- the others false) and the kind 9th, for the job's event (false: none;
-- nil, with the other fields, so that ev reads it). The reply is HMGET's
-- (an error table on a failure).
local function row_fields(row, ro)
  if ro == true then return rpcall('HMGET', row, 'att', 'uniq', 'lane', 'parent', 'keep', 'wait', 'ev', 'deps') end
  if ro then
    local f = rpcall('HMGET', row, 'att', 'uniq', 'ev', 'kind')
    if f.err then return f end
    f[3], f[4], f[7], f[9] = false, false, f[3], f[4]
    return f
  end
  return rpcall('HMGET', row, 'att', 'uniq')
end
