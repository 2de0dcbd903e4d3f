-- completemany.lua: EMQ.COMPLETEMANY, COMPLETE for 1..1000 jobs, each with its
-- own outcome: a lost lease leaves that job alone and the others complete.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:stats     hash, counter completed
-- KEYS[4] -> emq:{q}:active    zset
-- ARGV[1] -> n, the number of jobs, 1..1000
-- ARGV[2i], ARGV[2i + 1] -> job i: id, token (any bytes, compared with att)
--
-- Reply: array of n integers in argument order: 1 completed, 0 the row is
-- gone, -1 stale token, -2 not active.
-- Refusals, in order: ERR EMQ completemany numkeys must be 4; ERR EMQ
-- completemany wrong number of arguments (no ARGV); ERR EMQ completemany bad
-- count; ERR EMQ completemany wrong number of arguments (ARGV is not 1 + 2n);
-- ERR EMQ completemany bad key layout; per job ERR EMQ completemany bad id,
-- ERR EMQ completemany repeated id; the fence; job by job WRONGTYPE (the row,
-- active, unique:<uniq>); the lane accounting's refusals (the lanes of the
-- jobs completed, da minus their number); WRONGTYPE (stats), the HINCRBY
-- refusals (stats completed); NOPERM (logs).

local VERB = 'completemany'
local n, refusal = counted(VERB, 4, 2)
if not n then return refusal end
refusal = layout(VERB, {'version', 'stats', 'active'})
if refusal then return refusal end

-- values, pair by pair
local named = {}
for i = 1, n do
  local id = ARGV[2 * i]
  if not jobid(id) then return e_bad(VERB, 'id') end
  if named[id] then return {err = E_COMPLETEMANY_REPEATED} end
  named[id] = true
end
refusal = fence()
if refusal then return refusal end

-- domain reads, job by job; nothing is written before all are read
local base, stats, active = KEYS[1], KEYS[3], KEYS[4]
-- the rows, read then deleted: the caller's ACL on all first; the first
-- denied one is refused where it would be read
local rows, keys = {}, {}
for i = 1, n do
  rows[i] = base .. 'job:' .. ARGV[2 * i]
  keys[2 * i - 1], keys[2 * i] = rows[i], rows[i] .. ':logs'
end
-- the rows (read, then deleted) and their logs (deleted): one check of all
local all = may(keys, true, true)
local deny = not all and first_denied(rows, true, true)
local out, done, dels, logs = {}, {}, {}, {}
local acc = lane_acc()
for i = 1, n do
  local id, token = ARGV[2 * i], ARGV[2 * i + 1]
  local row = rows[i]
  if i == deny then return {err = E_NOPERM} end
  local f = rpcall('HMGET', row, 'att', 'uniq', 'lane')
  if f.err then return f end
  if not f[1] then
    out[i] = 0
  elseif f[1] ~= token then
    out[i] = -1
  else
    local score = rpcall('ZSCORE', active, id)
    if type(score) == 'table' then return score end
    if not score then
      out[i] = -2
    else
      local ukey = f[2] and base .. 'unique:' .. f[2]
      local holder
      if ukey then
        if not may({ukey}, true, true) then return {err = E_NOPERM} end
        holder = rpcall('GET', ukey)
        if type(holder) == 'table' then return holder end
      end
      out[i] = 1
      done[#done + 1] = id
      dels[#dels + 1] = row
      dels[#dels + 1] = row .. ':logs'
      logs[#logs + 1] = row .. ':logs'
      if holder == id then dels[#dels + 1] = ukey end
      local l = lane_name(f[3])
      if l then lane_add(acc, l, 0, -1) end
    end
  end
end
if #done == 0 then return out end
refusal = lane_read(acc)
if refusal then return refusal end
local c = rpcall('HGET', stats, 'completed')
if type(c) == 'table' then return c end
refusal = hincr_refusal(c, #done)
if refusal then return refusal end
-- the logs of the jobs completed are only deleted: refused where the writes
-- would start
if not all and not may(logs, false, true) then return {err = E_NOPERM} end

rcall('ZREM', active, unpack(done))
rcall('DEL', unpack(dels))
rcall('HINCRBY', stats, 'completed', #done)
if lane_write(acc) then signal_push(base .. 'signal') end
return out
