-- progress.lua: EMQ.PROGRESS, store an active attempt's progress value.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- ARGV[1] -> id
-- ARGV[2] -> token, the attempt the caller claimed (any bytes, compared with att)
-- ARGV[3] -> value, 0..65536 bytes, stored in the row's prog
--
-- Reply: integer 1; 0 when the row is gone.
-- Refusals, in order: ERR EMQ progress numkeys must be 2; ERR EMQ progress
-- wrong number of arguments; ERR EMQ progress bad key layout; ERR EMQ
-- progress bad id|value; the fence; WRONGTYPE (the row); EMQSTALE progress
-- token mismatch; with events, the events stream's refusals (lib.lua
-- ev_xadd).

local VERB = 'progress'
local refusal = shape(VERB, 2, 3) or layout(VERB, {'version'})
if refusal then return refusal end
local id = ARGV[1]
if not jobid(id) then return e_bad(VERB, 'id') end
if #ARGV[3] > MAX_TEXT then return e_bad(VERB, 'value') end
refusal = fence()
if refusal then return refusal end

local row = KEYS[1] .. 'job:' .. id
if not may({row}, true, true) then return {err = E_NOPERM} end
local f = rpcall('HMGET', row, 'att', 'ev')
if f.err then return f end
if not f[1] then return 0 end
if f[1] ~= ARGV[2] then return e_stale(VERB) end
local evs = {}
ev(evs, f[2], 'progress', id, 'value', ARGV[3])
refusal = ev_xadd(evs)
if refusal then return refusal end

rcall('HSET', row, 'prog', ARGV[3])
return 1
