-- resume.lua: EMQ.RESUME, let CLAIM hand out jobs again, and wake idle
-- workers when jobs are waiting.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:meta      hash, paused: 1 when paused; lanewait
-- KEYS[4] -> emq:{q}:pending   zset
-- KEYS[5] -> emq:{q}:signal    list
-- ARGV    -> none
--
-- Reply: integer 1 when the queue was paused, 0 (nothing written) when not.
-- Refusals, in order: ERR EMQ resume numkeys must be 5; ERR EMQ resume wrong
-- number of arguments; ERR EMQ resume bad key layout; the fence; WRONGTYPE
-- (meta, then pending and signal when paused).

local VERB = 'resume'
local refusal = shape(VERB, 5, 0) or layout(VERB, {'version', 'meta', 'pending', 'signal'})
if refusal then return refusal end
refusal = fence()
if refusal then return refusal end

local meta, pending, signal = KEYS[3], KEYS[4], KEYS[5]
local f = rpcall('HMGET', meta, 'paused', 'lanewait')
if f.err then return f end
if f[1] ~= '1' then return 0 end
local in_lanes = rowint(f[2], MAX_ROW_INT)
local waiting = rpcall('ZCARD', pending)
if type(waiting) == 'table' then return waiting end
local t = rpcall('LLEN', signal)
if type(t) == 'table' then return t end

rcall('HDEL', meta, 'paused')
if waiting > 0 or in_lanes > 0 then signal_push(signal) end
return 1
