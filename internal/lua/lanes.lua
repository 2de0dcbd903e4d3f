-- lanes.lua: EMQ.LANES, a page of the lanes with waiting or active jobs, in
-- byte order of their names (read-only).
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- ARGV[1] -> after, 0..128 bytes: the page starts after this name (empty:
--            from the first lane)
-- ARGV[2] -> count, 1..1000
--
-- Reply: array of [lane, waiting, active, cap, paused] (bulk, then four
-- integers), at most count; the next page starts after the last name.
-- Refusals, in order: ERR EMQ lanes numkeys must be 2; ERR EMQ lanes wrong
-- number of arguments; ERR EMQ lanes bad key layout; ERR EMQ lanes bad
-- after|count; the fence; NOPERM (lanes, laneinfo); WRONGTYPE (lanes);
-- NOPERM (lane:<l>); per lane WRONGTYPE (laneinfo, lane:<l>).

local VERB = 'lanes'
local refusal = shape(VERB, 2, 2) or layout(VERB, {'version'})
if refusal then return refusal end
local after = ARGV[1]
if #after > MAX_LANE_NAME then return e_bad(VERB, 'after') end
local count = uint(ARGV[2], 1, MAX_COUNT)
if not count then return e_bad(VERB, 'count') end
refusal = fence()
if refusal then return refusal end

local base = KEYS[1]
if first_denied({base .. 'lanes', base .. 'laneinfo'}, true, false) then return {err = E_NOPERM} end
local from = after == '' and '-' or '(' .. after
local names = rpcall('ZRANGE', base .. 'lanes', from, '+', 'BYLEX', 'LIMIT', 0, count)
if names.err then return names end
local keys = {}
for i = 1, #names do keys[i] = base .. 'lane:' .. names[i] end
if first_denied(keys, true, false) then return {err = E_NOPERM} end
local out = {}
for i = 1, #names do
  local info, r = lane_info(names[i])
  if not info then return r end
  out[i] = {names[i], info.w, info.a, info.c, info.p and 1 or 0}
end
return out
