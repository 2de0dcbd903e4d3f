-- pause.lua: EMQ.PAUSE, stop CLAIM from handing out jobs (they keep waiting).
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:meta      hash, paused: 1 when paused
-- ARGV    -> none
--
-- Reply: integer 1 when the queue was not paused, 0 when it already was.
-- Refusals, in order: ERR EMQ pause numkeys must be 3; ERR EMQ pause wrong
-- number of arguments; ERR EMQ pause bad key layout; the fence; WRONGTYPE
-- (meta).

local VERB = 'pause'
local refusal = shape(VERB, 3, 0) or layout(VERB, {'version', 'meta'})
if refusal then return refusal end
refusal = fence()
if refusal then return refusal end

local paused = rpcall('HGET', KEYS[3], 'paused')
if type(paused) == 'table' then return paused end
if paused == '1' then return 0 end
rcall('HSET', KEYS[3], 'paused', '1')
return 1
