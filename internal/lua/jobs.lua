-- jobs.lua: EMQ.JOBS, a page of the jobs of one state (read-only), in set
-- order or newest first, continued after a cursor.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- ARGV[1] -> state: pending delayed active dead completed waiting
-- ARGV[2] -> lane: empty, or with state pending a lane (its set lane:<l>)
-- ARGV[3] -> newest, 0 (set order) or 1 (newest first)
-- ARGV[4] -> after_score, ARGV[5] -> after_member: the cursor (both empty:
--            the start)
-- ARGV[6] -> count, 1..1000
-- ARGV[7] -> clip, 0..1024: the bytes of err, prog and the payload preview
--
-- Reply: [total, next_score, next_member, rows], each row [id, score, state,
-- att, max, prio, lane, parent, deps, at, err, err_size, prog, data_size,
-- preview, kind] (docs/PROTOCOL.md, "JOBS").
-- Refusals, in order: ERR EMQ jobs numkeys must be 2; ERR EMQ jobs wrong
-- number of arguments; ERR EMQ jobs bad key layout; ERR EMQ jobs bad
-- state|lane|newest|after|count|clip; the fence; NOPERM, WRONGTYPE (the
-- set); per member NOPERM, WRONGTYPE (its row).

local VERB = 'jobs'
local refusal = shape(VERB, 2, 7) or layout(VERB, {'version'})
if refusal then return refusal end
local state, lane = ARGV[1], ARGV[2]
local sets = {pending = true, delayed = true, active = true, dead = true, completed = true, waiting = true}
if not sets[state] then return e_bad(VERB, 'state') end
if lane ~= '' and (state ~= 'pending' or #lane > MAX_LANE_NAME) then return e_bad(VERB, 'lane') end
local newest = uint(ARGV[3], 0, 1)
if not newest then return e_bad(VERB, 'newest') end
local ok, after = ops.cursor(ARGV[4], ARGV[5])
if not ok then return e_bad(VERB, 'after') end
local count = uint(ARGV[6], 1, MAX_COUNT)
if not count then return e_bad(VERB, 'count') end
local clip = uint(ARGV[7], 0, ops.MAX_CLIP)
if not clip then return e_bad(VERB, 'clip') end
refusal = fence()
if refusal then return refusal end

local base = KEYS[1]
local set = base .. state
if lane ~= '' then set = base .. 'lane:' .. lane end
if not may({set}, true, false) then return {err = E_NOPERM} end
local total = rpcall('ZCARD', set)
if type(total) == 'table' then return total end
local b, e = ops.position(set, after, ARGV[5], total)

-- count + 1 members, in page order: the last tells whether the walk goes on
local page = {}
if newest == 0 then
  local r = rcall('ZRANGE', set, e, e + count, 'WITHSCORES')
  for i = 1, #r, 2 do page[#page + 1] = {r[i], tonumber(r[i + 1])} end
elseif b > 0 then
  local from = b - count - 1
  if from < 0 then from = 0 end
  local r = rcall('ZRANGE', set, from, b - 1, 'WITHSCORES')
  for i = #r - 1, 1, -2 do page[#page + 1] = {r[i], tonumber(r[i + 1])} end
end
local more = #page > count
if more then page[#page] = nil end

-- the rows of the members that are ids: the caller's ACL on all first; the
-- first denied one is refused where it would be read
local rows = {}
for i = 1, #page do
  if jobid(page[i][1]) then rows[#rows + 1] = base .. 'job:' .. page[i][1] end
end
local deny, k = first_denied(rows, true, false), 0

local function clipped(v)
  if v and #v > clip then return sub(v, 1, clip) end
  return v
end
local out = {}
for i = 1, #page do
  local id, score = page[i][1], page[i][2]
  local f
  if jobid(id) then
    k = k + 1
    if k == deny then return {err = E_NOPERM} end
    local row = base .. 'job:' .. id
    f = rpcall('HMGET', row, 'att', 'state', 'max', 'prio', 'lane', 'parent', 'deps', 'at', 'err', 'prog', 'kind')
    if f.err then return f end
    local size = rpcall('HSTRLEN', row, 'data')
    if type(size) == 'table' then return size end
    f.size = size
    if f[1] and clip > 0 and size <= ops.MAX_PREVIEW then
      f.preview = clipped(rcall('HGET', row, 'data'))
    end
  end
  if f and f[1] then
    out[i] = {id, score, f[2] or ROW_STATE, rowint(f[1], MAX_ROW_INT), rowint(f[3] or ROW_MAX, MAX_ROW_INT),
      rowint(f[4], MAX_PRIORITY), lane_name(f[5]) or false, (f[6] and jobid(f[6]) and f[6]) or false,
      rowint(f[7], MAX_ROW_INT), rowint(f[8], MAX_ROW_INT), clipped(f[9]) or false, f[9] and #f[9] or 0,
      clipped(f[10]) or false, f.size, f.preview or false, f[11] or false}
  else
    out[i] = {id, score, false, 0, 0, 0, false, false, 0, 0, false, 0, false, 0, false, false}
  end
end
if more then return {total, page[#page][2], page[#page][1], out} end
return {total, false, false, out}
