-- events.lua: EMQ.EVENTS, turn a queue's job events on with a bound on its
-- events stream, or off.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:meta      hash, events_max
-- ARGV[1] -> max_len, 0..1000000 (0: off), the stream's approximate MAXLEN
--
-- The stream itself is not touched: turning events off keeps the entries.
--
-- Reply: integer 1.
-- Refusals, in order: ERR EMQ events numkeys must be 3; ERR EMQ events wrong
-- number of arguments; ERR EMQ events bad key layout; ERR EMQ events bad
-- max_len; the fence; WRONGTYPE (meta).

local VERB = 'events'
local refusal = shape(VERB, 3, 1) or layout(VERB, {'version', 'meta'})
if refusal then return refusal end
local max = uint(ARGV[1], 0, MAX_EVENTS)
if not max then return e_bad(VERB, 'max_len') end
refusal = fence()
if refusal then return refusal end

local v = rpcall('HGET', KEYS[3], 'events_max')
if type(v) == 'table' then return v end
if max > 0 then
  rcall('HSET', KEYS[3], 'events_max', ARGV[1])
elseif v then
  rcall('HDEL', KEYS[3], 'events_max')
end
return 1
