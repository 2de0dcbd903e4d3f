-- rate.lua: EMQ.RATE, set or clear the queue's rate limit: at most max
-- claims per fixed window of window_ms.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:meta      hash, rate_max, rate_window
-- ARGV[1] -> max, 0..1000000
-- ARGV[2] -> window_ms, 0..86400000; exactly one of max and window_ms 0 is
--            refused, both 0 clears
--
-- The current window, if any, runs on with its count.
--
-- Reply: integer 1.
-- Refusals, in order: ERR EMQ rate numkeys must be 3; ERR EMQ rate wrong
-- number of arguments; ERR EMQ rate bad key layout; ERR EMQ rate bad
-- max|window; the fence; WRONGTYPE (meta).

local VERB = 'rate'
local refusal = shape(VERB, 3, 2) or layout(VERB, {'version', 'meta'})
if refusal then return refusal end
local max = uint(ARGV[1], 0, MAX_RATE_MAX)
if not max then return e_bad(VERB, 'max') end
local window = uint(ARGV[2], 0, MAX_RATE_WINDOW)
if not window or (max == 0) ~= (window == 0) then return e_bad(VERB, 'window') end
refusal = fence()
if refusal then return refusal end

local f = rpcall('HMGET', KEYS[3], 'rate_max', 'rate_window')
if f.err then return f end
if max > 0 then
  rcall('HSET', KEYS[3], 'rate_max', ARGV[1], 'rate_window', ARGV[2])
elseif f[1] or f[2] then
  rcall('HDEL', KEYS[3], 'rate_max', 'rate_window')
end
return 1
