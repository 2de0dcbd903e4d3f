-- claim.lua: EMQ.CLAIM, lease up to count ready jobs: the jobs without a
-- lane (pending, highest priority first) and the ready lanes, by fair turns.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:meta      hash, paused, rate_max, rate_window, turn, pturn, lanewait, jobfields,
--                              rowopts, lanesets
-- KEYS[4] -> emq:{q}:pending   zset
-- KEYS[5] -> emq:{q}:active    zset, score = lease deadline ms
-- ARGV[1] -> lease_ms, 1..86400000
-- ARGV[2] -> count, 1..1000
-- ARGV[3] -> ext, optional: 1 asks for the extended rows, 2 for them with
--            each job's wait, 0 (or absent) for neither
-- ARGV[4] -> block_ms, optional, 0..86400000: how long the native executor
--            may block a call that finds nothing; a script cannot block, so
--            it is checked and the call answers at once
--
-- Without lanes (turns is empty) the jobs come in pending order. With lanes,
-- the participants (pending at meta pturn, each ready lane at its score in
-- turns) are ordered by turn, pending first at equal turn, and served one
-- job each per pass until count jobs are taken or none has a job left; each
-- participant served takes the number of its last turn, counted on from
-- meta turn (docs/PROTOCOL.md, "Fair claiming").
--
-- Reply: array of [id, data, attempt] (bulk, bulk, integer) in turn order,
-- with ext 1 [id, data, attempt, max, kind, timeout, headers, lane] (max
-- and timeout integers, kind and headers bulk or null; lane the lane the
-- job was taken from, null for pending's) from one wider HMGET (of att
-- data ev max only while meta jobfields is not 1: then kind and headers
-- are null and timeout 0, as for a row without them); with ext 2 the same
-- and wait, the ms since the job was added when its row holds no state,
-- else null, the HMGET reading state at last; ev is read
-- unless meta rowopts is 0 or absent (then no row has events);
-- empty when the queue is paused or nothing is ready. A popped member that
-- is not an id, or whose row has no att, is dropped and not returned (it
-- used its turn).
-- Refusals, in order: ERR EMQ claim numkeys must be 5; ERR EMQ claim wrong
-- number of arguments; ERR EMQ claim bad key layout; ERR EMQ claim bad
-- lease|count|ext|block; the fence; WRONGTYPE (meta); with a rate NOPERM, WRONGTYPE
-- (rate), EMQRATE claim rate limited, retry in <ms> ms; WRONGTYPE (pending);
-- NOPERM, WRONGTYPE (turns); with lanes WRONGTYPE (turns), NOPERM (laneinfo,
-- lanes, lane:<l>), WRONGTYPE (laneinfo), per lane WRONGTYPE (lane:<l>);
-- NOPERM, WRONGTYPE (a row); ERR hash value is not an
-- integer or ERR increment or decrement would overflow (a row's att);
-- WRONGTYPE (active, and lanes with lanes); for jobs with events, the
-- events stream's refusals (lib.lua ev_xadd).

local VERB = 'claim'
local refusal = shape(VERB, 5)
if not refusal and (#ARGV < 2 or #ARGV > 4) then refusal = e_arity(VERB) end
refusal = refusal or layout(VERB, {'version', 'meta', 'pending', 'active'})
if refusal then return refusal end
local lease = uint(ARGV[1], 1, MAX_LEASE)
if not lease then return e_bad(VERB, 'lease') end
local count = uint(ARGV[2], 1, MAX_COUNT)
if not count then return e_bad(VERB, 'count') end
local ext = ARGV[3] or '0'
if ext ~= '0' and ext ~= '1' and ext ~= '2' then return e_bad(VERB, 'ext') end
-- waits: ext 2, the extended rows with each job's wait
local waits = ext == '2'
ext = ext ~= '0'
if ARGV[4] and not uint(ARGV[4], 0, MAX_BLOCK) then return e_bad(VERB, 'block') end
refusal = fence()
if refusal then return refusal end

local base, meta, pending, active = KEYS[1], KEYS[3], KEYS[4], KEYS[5]
local m = rpcall('HMGET', meta, 'paused', 'rate_max', 'rate_window', 'turn', 'pturn', 'lanewait', 'jobfields', 'rowopts', 'lanesets')
if m.err then return m end
if m[1] == '1' then return {} end
-- ext on a queue no job of which stored kind, timeout or headers (meta
-- jobfields not 1) reads max only: those fields reply as absent
local full = ext and m[7] == '1'
-- the row fields read: att data, ev unless meta rowopts says no row of the
-- queue has one (0 or absent), then with ext max [kind timeout headers]
local rowf = {'att', 'data'}
local x = 2 -- the index of the row's field before max
if m[8] and m[8] ~= '0' then rowf[3], x = 'ev', 3 end
if ext then
  rowf[#rowf + 1] = 'max'
  if full then
    rowf[#rowf + 1], rowf[#rowf + 2], rowf[#rowf + 3] = 'kind', 'timeout', 'headers'
  end
  if waits then rowf[#rowf + 1], rowf[#rowf + 2] = 'state', 'at' end
end
-- ws is the index of the row's state, before at, in a read with waits
local ws = #rowf - 1

-- the rate log, which may refuse or cut count; now is the call's clock,
-- the rate log's and the leases', read once
local rmax, rwindow = rowint(m[2], MAX_ROW_INT), rowint(m[3], MAX_ROW_INT)
local rated, used, rnext, rat, now = rmax > 0 and rwindow > 0, 0, 0, 0, nil
if rated then
  now = now_ms()
  used, rnext, rat = rate_read(rmax, rwindow, now)
  if not used then return rnext end
  if count > rmax - used then count = rmax - used end
end

local ids = rpcall('ZRANGE', pending, 0, count - 1)
if ids.err then return ids end
local turns = base .. 'turns'
if not may({turns}, true, true) then return {err = E_NOPERM} end
local nturns = rpcall('ZCARD', turns)
if type(nturns) == 'table' then return nturns end
if #ids == 0 and nturns == 0 then return {} end

-- jobs[t] is the member of the t-th turn given, from[t] its participant:
-- lane i of turns, or 0 for pending (pend: it has jobs). The lanes are kept
-- in arrays by their index, which cost less than a table a lane: names,
-- lk (lane:<l>), af (active:<l>), lf (the laneinfo fields read, sw a lane:
-- three, or only active:<l> when bare), the settings A (active), C (cap), PZ
-- (paused), room; per participant sup (its supply), K (its turns), J (its
-- last turn's number), got (its jobs returned), heads; per lane LW (its
-- size, or a lower bound above its turns when X is false).
local jobs, from = {}, {}
local nl, pend, T = 0, false, 0
local names, lk, af, lf, sw, bare = {}, {}, {}, {}, 3, false
local A, C, PZ, room, sup, K, J, LW, X, got, heads = {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}
if nturns == 0 then
  for i = 1, #ids do jobs[i] = ids[i] end
else
  local tl = rpcall('ZRANGE', turns, 0, count - 1, 'WITHSCORES')
  if tl.err then return tl end
  nl = #tl / 2
  local acl, score = {base .. 'laneinfo', base .. 'lanes'}, {}
  for i = 1, nl do
    names[i], score[i] = tl[2 * i - 1], tonumber(tl[2 * i])
    lk[i] = base .. 'lane:' .. names[i]
    acl[i + 2] = lk[i]
  end
  if first_denied(acl, true, true) then return {err = E_NOPERM} end
  -- every lane's laneinfo fields at once (laneinfo is one key: its
  -- WRONGTYPE comes first either way): HGETALL when laneinfo holds few more
  -- fields than those or is small (a listpack, where each field HMGET asks
  -- for is a scan of the whole hash), else one HMGET; the values are the same.
  -- No lane has a setting when meta lanesets (read like a row's number) is
  -- 0 (bare): then only the active counts are read.
  local n = rpcall('HLEN', acl[1])
  if type(n) == 'table' then return n end
  bare = rowint(m[9], MAX_ROW_INT) == 0
  if bare then sw = 1 end
  for i = 1, nl do
    local l = names[i]
    af[i] = 'active:' .. l
    if bare then
      lf[i] = af[i]
    else
      lf[3 * i - 2], lf[3 * i - 1], lf[3 * i] = af[i], 'cap:' .. l, 'paused:' .. l
    end
  end
  local info = {}
  if n <= sw * nl or (n <= 512 and nl >= 8) then
    local all, by = rcall('HGETALL', acl[1]), {}
    for i = 1, #all, 2 do by[all[i]] = all[i + 1] end
    for i = 1, #lf do info[i] = by[lf[i]] or false end
  elseif nl > 0 then
    info = rcall('HMGET', acl[1], unpack(lf))
  end
  -- room is what a lane's settings let it give: none when paused or at its
  -- cap, else up to its cap (or count)
  for i = 1, nl do
    local a, c, p, r = rowint(info[sw * (i - 1) + 1], MAX_ROW_INT), 0, false, count
    if not bare then c, p = rowint(info[3 * i - 1], MAX_ROW_INT), info[3 * i] == '1' end
    if p or (c > 0 and a >= c) then
      r = 0
    elseif c > 0 and c - a < count then
      r = c - a
    end
    A[i], C[i], PZ[i], room[i], sup[i], got[i] = a, c, p, r, r, 0
  end

  -- the participants in turn order: pending before the first lane whose
  -- turn is not below pturn
  local P = rowint(m[5], MAX_ROW_INT)
  T = rowint(m[4], MAX_ROW_INT)
  if #ids > 0 then pend, sup[0], got[0], heads[0] = true, #ids, 0, ids end
  -- give gives the turns by the supplies: passes of one job per participant,
  -- filling jobs (each the index in its participant's head) and from
  local function give()
    local order, placed = {}, not pend
    jobs, from = {}, {}
    K[0] = 0
    for i = 1, nl do
      K[i] = 0
      if not placed and P <= score[i] then
        order[#order + 1] = 0
        placed = true
      end
      if sup[i] > 0 then order[#order + 1] = i end
    end
    if not placed then order[#order + 1] = 0 end
    local taken = 0
    while taken < count and #order > 0 do
      local left = {}
      for x = 1, #order do
        local p = order[x]
        if taken < count then
          taken = taken + 1
          K[p] = K[p] + 1
          J[p] = taken
          from[taken] = p
          jobs[taken] = K[p] -- replaced by the member below
        end
        if K[p] < sup[p] then left[#left + 1] = p end
      end
      order = left
    end
    return taken
  end

  -- each lane's size only as far as its turns need it: the turns given as if
  -- every lane held count jobs, then per lane ZRANGE of one member more than
  -- its turns (fewer back: its size), or ZCARD for a lane given none. These
  -- turns stand unless a lane held fewer jobs than its turns: then every size
  -- is read, the turns given again, and the heads read on where they are
  -- short.
  local taken = give()
  local short = false
  for i = 1, nl do
    if K[i] > 0 then
      local h = rpcall('ZRANGE', lk[i], 0, K[i])
      if h.err then return h end
      heads[i], LW[i], X[i] = h, #h, #h <= K[i]
      if #h < K[i] then short = true end
    else
      local w = rpcall('ZCARD', lk[i])
      if type(w) == 'table' then return w end
      LW[i], X[i] = w, true
    end
  end
  if short then
    for i = 1, nl do
      if not X[i] then LW[i], X[i] = rcall('ZCARD', lk[i]), true end
      sup[i] = LW[i] < room[i] and LW[i] or room[i]
    end
    taken = give()
    for i = 1, nl do
      if K[i] > (heads[i] and #heads[i] or 0) then heads[i] = rcall('ZRANGE', lk[i], 0, K[i] - 1) end
    end
  end
  if taken == 0 then return {} end
  for t = 1, taken do
    jobs[t] = heads[from[t]][jobs[t]]
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

-- rows[t] is the row's HMGET reply (att data [ev] ...) for a member whose
-- row has att, else false; its key is keys[at[t]]
local rows = {}
for t = 1, #jobs do
  local row, k = false, at[t]
  if k then
    if k == deny then return {err = E_NOPERM} end
    row = rpcall('HMGET', keys[k], unpack(rowf))
    if row.err then return row end
    if row[1] then
      refusal = hincr_refusal(row[1], 1)
      if refusal then return refusal end
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
-- kinds is a claimed job's kind for its event: its row read's (with ext,
-- once meta jobfields is 1); nil, so ev reads it, when jobfields is 1 and
-- the read has no kind; false, none, while no job of the queue stored one
local function kinds(row)
  if full then return row[x + 2] or false end
  if m[7] == '1' then return nil end
  return false
end
-- claim_wait is an extended row's wait (verdict.ClaimWait): now less its at
-- when the row holds no state (added ready, neither claimed nor moved
-- since) and at reads as a row number, at least 0; else false (null)
local function claim_wait(state, added, now)
  local a = not state and added and uint(added, 0, MAX_ROW_INT)
  if not a then return false end
  if now > a then return now - a end
  return 0
end
-- nx[t] is the t-th job's next attempt, as HINCRBY row att 1 would store it
-- (a job taken twice, its id in pending and a lane behind the verbs' back,
-- counts on from its first: last[row] is its latest)
local evs, nx, last = {}, {}, {}
for i = 1, #jobs do
  if rows[i] then
    local k = keys[at[i]]
    nx[i] = succ(last[k] or rows[i][1])
    last[k] = nx[i]
    if x == 3 and rows[i][3] then ev(evs, rows[i][3], 'claimed', jobs[i], 'att', nx[i], kinds(rows[i])) end
  end
end
refusal = ev_xadd(evs)
if refusal then return refusal end

-- writes
now = now or now_ms()
local deadline = format('%d', now + lease)
if nturns == 0 then
  rcall('ZPOPMIN', pending, #ids)
else
  if pend and K[0] > 0 then rcall('ZPOPMIN', pending, K[0]) end
  -- a lane whose every job is taken is deleted, with the others, in one DEL
  local drained = {}
  for i = 1, nl do
    if K[i] > 0 and X[i] and LW[i] == K[i] then
      drained[#drained + 1] = lk[i]
    elseif K[i] > 0 then
      rcall('ZPOPMIN', lk[i], K[i])
    end
  end
  if #drained > 0 then rcall('DEL', unpack(drained)) end
end
-- per job one HSET of its state and predicted attempt (both fields updated
-- where they stand, as HINCRBY then HSET would), then one ZADD active of
-- every job
local out, dl = {}, {}
for i = 1, #jobs do
  if rows[i] then
    local id = jobs[i]
    rcall('HSET', keys[at[i]], 'state', 'active', 'att', nx[i])
    dl[#dl + 1], dl[#dl + 2] = deadline, id
    local att, r = tonumber(nx[i]), rows[i]
    -- the lane the job was taken from (its turn's participant), false for pending
    local lane = (from[i] or 0) > 0 and names[from[i]] or false
    if full then
      out[#out + 1] = {id, r[2], att, rowint(r[x + 1] or ROW_MAX, MAX_ROW_INT), r[x + 2], rowint(r[x + 3], MAX_TIMEOUT), r[x + 4], lane}
    elseif ext then
      out[#out + 1] = {id, r[2], att, rowint(r[x + 1] or ROW_MAX, MAX_ROW_INT), false, 0, false, lane}
    else
      out[#out + 1] = {id, r[2], att}
    end
    if waits then out[#out][9] = claim_wait(r[ws], r[ws + 1], now) end
    local f = from[i]
    if f then got[f] = got[f] + 1 end
  end
end
if #dl > 0 then rcall('ZADD', active, unpack(dl)) end
if nturns > 0 then
  -- the lanes' writes merged per key, each in turns order: one HSET
  -- laneinfo of the active counts, one ZREM lanes of the lanes left without
  -- a job, one ZREM turns of the lanes no longer ready, one ZADD turns of
  -- the lanes served still ready
  local W = rowint(m[6], MAX_ROW_INT)
  local sumk = 0
  local act, gone, leave, stay = {}, {}, {}, {}
  for i = 1, nl do
    local k = K[i]
    if k > 0 then
      sumk = sumk + k
      local a2, w2 = A[i] + got[i], LW[i] - k
      if a2 ~= A[i] then
        act[#act + 1] = af[i]
        act[#act + 1] = format('%d', a2)
      end
      if w2 == 0 and a2 == 0 then gone[#gone + 1] = names[i] end
      if lane_ready(w2, a2, C[i], PZ[i]) then
        stay[#stay + 1] = format('%d', T + J[i])
        stay[#stay + 1] = names[i]
      else
        leave[#leave + 1] = names[i]
      end
    elseif not lane_ready(LW[i], A[i], C[i], PZ[i]) then
      leave[#leave + 1] = names[i]
    end
  end
  if #act > 0 then rcall('HSET', base .. 'laneinfo', unpack(act)) end
  if #gone > 0 then rcall('ZREM', base .. 'lanes', unpack(gone)) end
  if #leave > 0 then rcall('ZREM', turns, unpack(leave)) end
  if #stay > 0 then rcall('ZADD', turns, unpack(stay)) end
  local fields = {'turn', format('%d', T + #jobs)}
  if pend and K[0] > 0 then
    fields[3], fields[4] = 'pturn', format('%d', T + J[0])
  end
  local W2 = W - sumk
  if W2 < 0 then W2 = 0 end
  if W2 ~= W then
    fields[#fields + 1] = 'lanewait'
    fields[#fields + 1] = format('%d', W2)
  end
  rcall('HSET', meta, unpack(fields))
end
if rated and #out > 0 then rate_write(rnext, #out, rwindow, now, rat) end
return out
