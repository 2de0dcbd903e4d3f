-- lanecap.lua: EMQ.LANECAP, set or clear a lane's concurrency cap (at most
-- cap of its jobs active at once).
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- ARGV[1] -> lane, 1..128 bytes
-- ARGV[2] -> cap, 0..1000000 (0 clears)
--
-- The lane keys (laneinfo, lanes, turns, lane:<l>) are derived from the
-- base; the lane accounting of lib.lua moves the lane in or out of turns
-- as the new cap makes it ready or not.
--
-- meta lanesets, the count of the lanes with a cap or a pause, follows the
-- lane's change (lib.lua lane_sets).
--
-- Reply: integer 1.
-- Refusals, in order: ERR EMQ lanecap numkeys must be 2; ERR EMQ lanecap
-- wrong number of arguments; ERR EMQ lanecap bad key layout; ERR EMQ lanecap
-- bad lane|cap; the fence; the lane accounting's refusals.

local VERB = 'lanecap'
local refusal = shape(VERB, 2, 2) or layout(VERB, {'version'})
if refusal then return refusal end
local l = ARGV[1]
if #l == 0 or #l > MAX_LANE_NAME then return e_bad(VERB, 'lane') end
local cap = uint(ARGV[2], 0, MAX_LANE_CAP)
if not cap then return e_bad(VERB, 'cap') end
refusal = fence()
if refusal then return refusal end

local acc = lane_acc()
lane_add(acc, l, 0, 0)
refusal = lane_read(acc)
if refusal then return refusal end

local e = acc.list[1]
local n, s = lane_sets()
if cap > 0 and e.cap ~= ARGV[2] then
  rcall('HSET', KEYS[1] .. 'laneinfo', 'cap:' .. l, ARGV[2])
elseif cap == 0 and e.cap then
  rcall('HDEL', KEYS[1] .. 'laneinfo', 'cap:' .. l)
end
e.c2 = cap
lane_sets_write(n, s, e)
if lane_write(acc) then signal_push(KEYS[1] .. 'signal') end
return 1
