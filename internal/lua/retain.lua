-- retain.lua: EMQ.RETAIN, set how long and how many completed and dead jobs
-- a queue keeps, and the bound of a result.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:meta      hash, keep_done keep_done_max keep_dead keep_dead_max result_max
-- ARGV[1] -> keep_done_ms, 0..315360000000 (0: completed jobs are not kept by age)
-- ARGV[2] -> keep_done_max, 0..100000000 (0: no bound)
-- ARGV[3] -> keep_dead_ms, 0..315360000000 (0: no bound)
-- ARGV[4] -> keep_dead_max, 0..100000000 (0: no bound)
-- ARGV[5] -> result_max, 0..1048576 bytes (0: the default, 262144)
--
-- Reply: integer 1.
-- Refusals, in order: ERR EMQ retain numkeys must be 3; ERR EMQ retain wrong
-- number of arguments; ERR EMQ retain bad key layout; ERR EMQ retain bad
-- keep_done|keep_done_max|keep_dead|keep_dead_max|result_max; the fence;
-- WRONGTYPE (meta).

local VERB = 'retain'
local refusal = shape(VERB, 3, 5) or layout(VERB, {'version', 'meta'})
if refusal then return refusal end
local names = {'keep_done', 'keep_done_max', 'keep_dead', 'keep_dead_max', 'result_max'}
local his = {MAX_DELAY, MAX_KEEP_COUNT, MAX_DELAY, MAX_KEEP_COUNT, MAX_RESULT}
for i = 1, 5 do
  if not uint(ARGV[i], 0, his[i]) then return e_bad(VERB, names[i]) end
end
refusal = fence()
if refusal then return refusal end

local t = rpcall('HGET', KEYS[3], 'seq')
if type(t) == 'table' then return t end
rcall('HSET', KEYS[3], 'keep_done', ARGV[1], 'keep_done_max', ARGV[2], 'keep_dead', ARGV[3],
  'keep_dead_max', ARGV[4], 'result_max', ARGV[5])
return 1
