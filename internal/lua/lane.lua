-- lane.lua: EMQ.LANE, one lane's counts and settings (read-only).
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- ARGV[1] -> lane, 1..128 bytes
--
-- Reply: array of four integers [waiting, active, cap, paused] (cap 0: none;
-- paused 0 or 1), all 0 for a lane never used.
-- Refusals, in order: ERR EMQ lane numkeys must be 2; ERR EMQ lane wrong
-- number of arguments; ERR EMQ lane bad key layout; ERR EMQ lane bad lane;
-- the fence; NOPERM (laneinfo, lane:<l>); WRONGTYPE (laneinfo, lane:<l>).

local VERB = 'lane'
local refusal = shape(VERB, 2, 1) or layout(VERB, {'version'})
if refusal then return refusal end
local l = ARGV[1]
if #l == 0 or #l > MAX_LANE_NAME then return e_bad(VERB, 'lane') end
refusal = fence()
if refusal then return refusal end

if first_denied({KEYS[1] .. 'laneinfo', KEYS[1] .. 'lane:' .. l}, true, false) then return {err = E_NOPERM} end
local info, r = lane_info(l)
if not info then return r end
return {info.w, info.a, info.c, info.p and 1 or 0}
