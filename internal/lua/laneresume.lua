-- laneresume.lua: EMQ.LANERESUME, let CLAIM serve a paused lane again, and
-- wake idle workers when it is ready.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- ARGV[1] -> lane, 1..128 bytes
--
-- meta lanesets, the count of the lanes with a cap or a pause, follows the
-- lane's change (lib.lua lane_sets).
--
-- Reply: integer 1 when the lane was paused, 0 (nothing written) when not.
-- Refusals, in order: ERR EMQ laneresume numkeys must be 2; ERR EMQ
-- laneresume wrong number of arguments; ERR EMQ laneresume bad key layout;
-- ERR EMQ laneresume bad lane; the fence; the lane accounting's refusals.

local VERB = 'laneresume'
local refusal = shape(VERB, 2, 1) or layout(VERB, {'version'})
if refusal then return refusal end
local l = ARGV[1]
if #l == 0 or #l > MAX_LANE_NAME then return e_bad(VERB, 'lane') end
refusal = fence()
if refusal then return refusal end

local acc = lane_acc()
lane_add(acc, l, 0, 0)
refusal = lane_read(acc)
if refusal then return refusal end

local e = acc.list[1]
if not e.p then return 0 end
local n, s = lane_sets()
rcall('HDEL', KEYS[1] .. 'laneinfo', 'paused:' .. l)
e.p2 = false
lane_sets_write(n, s, e)
if lane_write(acc) then signal_push(KEYS[1] .. 'signal') end
return 1
