-- extend.lua: EMQ.EXTEND, move an active job's lease deadline (a heartbeat).
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:active    zset, score = lease deadline ms
-- ARGV[1] -> id
-- ARGV[2] -> token, the attempt the caller claimed (any bytes, compared with att)
-- ARGV[3] -> lease_ms, 1..86400000, counted from now
--
-- Reply: integer, the new deadline ms; 0 when the row is gone.
-- Refusals, in order: ERR EMQ extend numkeys must be 3; ERR EMQ extend wrong
-- number of arguments; ERR EMQ extend bad key layout; ERR EMQ extend bad
-- id|lease; the fence; WRONGTYPE (the row); EMQSTALE extend token mismatch;
-- WRONGTYPE (active); EMQSTATE extend cancelled (CANCEL ended the job) or
-- EMQSTATE extend not active.

local VERB = 'extend'
local refusal = shape(VERB, 3, 3) or layout(VERB, {'version', 'active'})
if refusal then return refusal end
local id, token = ARGV[1], ARGV[2]
if not jobid(id) then return e_bad(VERB, 'id') end
local lease = uint(ARGV[3], 1, MAX_LEASE)
if not lease then return e_bad(VERB, 'lease') end
refusal = fence()
if refusal then return refusal end

local row = KEYS[1] .. 'job:' .. id
if not may({row}, true, false) then return {err = E_NOPERM} end
local att = rpcall('HGET', row, 'att')
if type(att) == 'table' then return att end
if not att then return 0 end
if att ~= token then return e_stale(VERB) end
local score = rpcall('ZSCORE', KEYS[3], id)
if type(score) == 'table' then return score end
if not score then return not_active(VERB, row) end

local deadline = now_ms() + lease
rcall('ZADD', KEYS[3], 'XX', format('%d', deadline), id)
return deadline
