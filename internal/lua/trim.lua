-- trim.lua: EMQ.TRIM, delete retained completed jobs and dead jobs past the
-- queue's bounds, at most limit per call.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:meta      hash, keep_done keep_done_max keep_dead keep_dead_max
-- KEYS[4] -> emq:{q}:stats     hash, counter trimmed (the dead jobs trimmed)
-- KEYS[5] -> emq:{q}:dead      zset
-- ARGV[1] -> limit, 1..1000
--
-- Reply: array [completed_trimmed, dead_trimmed] (integers).
-- Refusals, in order: ERR EMQ trim numkeys must be 5; ERR EMQ trim wrong
-- number of arguments; ERR EMQ trim bad key layout; ERR EMQ trim bad limit;
-- the fence; WRONGTYPE (meta); NOPERM (completed); WRONGTYPE (completed,
-- dead); NOPERM (the rows, logs, kids, results, failures of the ids);
-- WRONGTYPE (the rows); per unique key NOPERM, WRONGTYPE; WRONGTYPE (stats),
-- the HINCRBY refusals (stats trimmed).

local VERB = 'trim'
local refusal = shape(VERB, 5, 1) or layout(VERB, {'version', 'meta', 'stats', 'dead'})
if refusal then return refusal end
local limit = uint(ARGV[1], 1, MAX_COUNT)
if not limit then return e_bad(VERB, 'limit') end
refusal = fence()
if refusal then return refusal end

local base, meta, stats, dead = KEYS[1], KEYS[3], KEYS[4], KEYS[5]
local completed = base .. 'completed'
local m = rpcall('HMGET', meta, 'keep_done', 'keep_done_max', 'keep_dead', 'keep_dead_max')
if m.err then return m end
local keep_done, keep_done_max = rowint(m[1], MAX_ROW_INT), rowint(m[2], MAX_ROW_INT)
local keep_dead = rowint(m[3], MAX_ROW_INT)
local keep_dead_max = m[4] and rowint(m[4], MAX_ROW_INT) or DEFAULT_KEEP_DEAD
if not may({completed}, true, true) then return {err = E_NOPERM} end
local now = now_ms()

-- take at most limit ids in all: by age, then beyond the count bound (the
-- oldest first, skipping those taken by age)
local left = limit
local function take(set, keep_ms, keep_max)
  local ids, taken = {}, {}
  if keep_ms > 0 and left > 0 then
    local r = rpcall('ZRANGEBYSCORE', set, '-inf', '(' .. format('%d', now - keep_ms), 'LIMIT', 0, left)
    if r.err then return nil, r end
    for i = 1, #r do
      ids[#ids + 1] = r[i]
      taken[r[i]] = true
    end
    left = left - #r
  end
  if keep_max > 0 and left > 0 then
    local card = rpcall('ZCARD', set)
    if type(card) == 'table' then return nil, card end
    local excess = card - keep_max
    if excess > 0 then
      local upto = excess
      if upto > #ids + left then upto = #ids + left end
      local r = rpcall('ZRANGE', set, 0, upto - 1)
      if r.err then return nil, r end
      for i = 1, #r do
        if left > 0 and not taken[r[i]] then
          ids[#ids + 1] = r[i]
          taken[r[i]] = true
          left = left - 1
        end
      end
    end
  end
  return ids
end
local cids, r1 = take(completed, keep_done, keep_done_max)
if not cids then return r1 end
local dids, r2 = take(dead, keep_dead, keep_dead_max)
if not dids then return r2 end
if #cids == 0 and #dids == 0 then return {0, 0} end

-- the rows, read then deleted, with their logs and flow keys
local all, keys, rows = {}, {}, {}
for i = 1, #cids do all[#all + 1] = cids[i] end
for i = 1, #dids do all[#all + 1] = dids[i] end
for i = 1, #all do
  if jobid(all[i]) then
    local row = base .. 'job:' .. all[i]
    rows[#rows + 1] = row
    for _, s in ipairs({'', ':logs', ':kids', ':results', ':failures'}) do keys[#keys + 1] = row .. s end
  end
end
if first_denied(keys, true, true) then return {err = E_NOPERM} end
local dels = {}
for i = 1, #rows do
  local row = rows[i]
  local f = rpcall('HMGET', row, 'uniq')
  if f.err then return f end
  for _, s in ipairs({'', ':logs', ':kids', ':results', ':failures'}) do dels[#dels + 1] = row .. s end
  if f[1] then
    local ukey = base .. 'unique:' .. f[1]
    if not may({ukey}, true, true) then return {err = E_NOPERM} end
    local holder = rpcall('GET', ukey)
    if type(holder) == 'table' then return holder end
    if holder == sub(row, #base + 5) then dels[#dels + 1] = ukey end
  end
end
if #dids > 0 then
  local c = rpcall('HGET', stats, 'trimmed')
  if type(c) == 'table' then return c end
  refusal = hincr_refusal(c, #dids)
  if refusal then return refusal end
end

if #cids > 0 then rcall('ZREM', completed, unpack(cids)) end
if #dids > 0 then rcall('ZREM', dead, unpack(dids)) end
if #dels > 0 then rcall('DEL', unpack(dels)) end
if #dids > 0 then rcall('HINCRBY', stats, 'trimmed', #dids) end
return {#cids, #dids}
