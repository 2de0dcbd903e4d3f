-- lanepause.lua: EMQ.LANEPAUSE, stop CLAIM from serving one lane (its jobs
-- keep waiting).
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- ARGV[1] -> lane, 1..128 bytes
--
-- meta lanesets, the count of the lanes with a cap or a pause, follows the
-- lane's change (lib.lua lane_sets).
--
-- Reply: integer 1 when the lane was not paused, 0 (nothing written) when it
-- already was.
-- Refusals, in order: ERR EMQ lanepause numkeys must be 2; ERR EMQ lanepause
-- wrong number of arguments; ERR EMQ lanepause bad key layout; ERR EMQ
-- lanepause bad lane; the fence; the lane accounting's refusals.

local VERB = 'lanepause'
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
if e.p then return 0 end
local n, s = lane_sets()
rcall('HSET', KEYS[1] .. 'laneinfo', 'paused:' .. l, '1')
e.p2 = true
lane_sets_write(n, s, e)
lane_write(acc)
return 1
