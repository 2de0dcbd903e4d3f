-- completemany.lua: EMQ.COMPLETEMANY, COMPLETE for 1..1000 jobs, each with its
-- own outcome: a lost lease leaves that job alone and the others complete.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:stats     hash, counter completed
-- KEYS[4] -> emq:{q}:active    zset
-- ARGV[1] -> n, the number of jobs, 1..1000
-- ARGV[3i - 1], ARGV[3i], ARGV[3i + 1] -> job i: id, token (any bytes,
--            compared with att), result (0..1048576 bytes; 0: none)
--
-- Reply: array of n integers in argument order: 1 completed, 0 the row is
-- gone, -1 stale token, -2 not active, -3 the result is over result_max,
-- -4 cancelled (CANCEL ended the job).
-- Refusals, in order: ERR EMQ completemany numkeys must be 4; ERR EMQ
-- completemany wrong number of arguments (no ARGV); ERR EMQ completemany bad
-- count; ERR EMQ completemany wrong number of arguments (ARGV is not 1 + 3n);
-- ERR EMQ completemany bad key layout; per job ERR EMQ completemany bad id,
-- ERR EMQ completemany repeated id, ERR EMQ completemany bad result; the
-- fence; job by job NOPERM, WRONGTYPE (the row, active, unique:<uniq>, meta
-- result_max at the first non-empty result of a job that passed those),
-- NOPERM (completed, at the first retained job), the parents' refusals
-- (lib.lua flow_finish); the lane accounting's refusals (the lanes of the
-- jobs completed, da minus their number, and of the parents released to a
-- lane); WRONGTYPE (stats), the HINCRBY refusals (stats completed);
-- WRONGTYPE (completed); the flow types' refusals; NOPERM (logs of the jobs
-- deleted, and kids, results, failures of the parents deleted: rows with
-- deps); with events (a completed job's or a released parent's), the events
-- stream's refusals (lib.lua ev_xadd).
-- Meta rowopts (lib.lua row_opts), read first, tells whether the rows' lane
-- parent keep wait ev deps are read: while it is 0 or absent only att uniq
-- are, while it is 2 att uniq ev kind (the kind for the job's event).

local VERB = 'completemany'
local n, refusal = counted(VERB, 4, 3)
if not n then return refusal end
refusal = layout(VERB, {'version', 'stats', 'active'})
if refusal then return refusal end

-- values, triple by triple
local named = {}
for i = 1, n do
  local id = ARGV[3 * i - 1]
  if not jobid(id) then return e_bad(VERB, 'id') end
  if named[id] then return {err = E_COMPLETEMANY_REPEATED} end
  named[id] = true
  if #ARGV[3 * i + 1] > MAX_RESULT then return e_bad(VERB, 'result') end
end
refusal = fence()
if refusal then return refusal end

-- domain reads, job by job; nothing is written before all are read
local base, stats, active = KEYS[1], KEYS[3], KEYS[4]
local completed = base .. 'completed'
-- the rows (read, then deleted or kept), their logs (deleted) and meta
-- (read): one check of all; the first denied row is refused where it would
-- be read; a parent's flow keys (deleted) are checked once its deps are read
local rows, keys = {}, {}
for i = 1, n do
  local r = base .. 'job:' .. ARGV[3 * i - 1]
  rows[i] = r
  keys[2 * i - 1] = r
  keys[2 * i] = r .. ':logs'
end
keys[2 * n + 1] = base .. 'meta'
local all = may(keys, true, true)
-- lane parent keep wait ev deps are read unless meta says no row has one,
-- or ev alone (meta's own check only when the one of all failed)
local ro = row_opts(keys[2 * n + 1], all)
local deny = not all and first_denied(rows, true, true)
local out, done, dels, gone, kept, evs = {}, {}, {}, {}, {}, {}
local acc = lane_acc()
local fa = flow_acc(acc)
local rmax, anykept
for i = 1, n do
  local id, token, result = ARGV[3 * i - 1], ARGV[3 * i], ARGV[3 * i + 1]
  local row = rows[i]
  if i == deny then return {err = E_NOPERM} end
  local f = row_fields(row, ro)
  if f.err then return f end
  if not f[1] then
    out[i] = 0
  elseif f[1] ~= token then
    out[i] = -1
  else
    local score = rpcall('ZSCORE', active, id)
    if type(score) == 'table' then return score end
    if not score then
      -- -4: CANCEL ended the job (its cancelled field, read only here)
      out[i] = rcall('HGET', row, 'cancelled') and -4 or -2
    else
      local ukey = f[2] and base .. 'unique:' .. f[2]
      local holder
      if ukey then
        if not may({ukey}, true, true) then return {err = E_NOPERM} end
        holder = rpcall('GET', ukey)
        if type(holder) == 'table' then return holder end
      end
      if result ~= '' and not rmax then
        if not may({base .. 'meta'}, true, false) then return {err = E_NOPERM} end
        rmax = rpcall('HGET', base .. 'meta', 'result_max')
        if type(rmax) == 'table' then return rmax end
        rmax = rowint(rmax, MAX_RESULT)
        if rmax == 0 then rmax = DEFAULT_RESULT end
      end
      if result ~= '' and #result > rmax then
        out[i] = -3
      else
        out[i] = 1
        done[#done + 1] = id
        if f[7] then ev(evs, f[7], 'completed', id, nil, nil, f[9]) end
        if f[5] == '1' then
          if not anykept then
            anykept = true
            if not may({completed}, true, true) then return {err = E_NOPERM} end
          end
          kept[#kept + 1] = {row = row, id = id, result = result}
        else
          local logs = row .. ':logs'
          dels[#dels + 1] = row
          dels[#dels + 1] = logs
          if not all then gone[#gone + 1] = logs end
          if f[8] then
            for _, s in ipairs({':kids', ':results', ':failures'}) do
              dels[#dels + 1] = row .. s
              gone[#gone + 1] = row .. s
            end
          end
        end
        if holder == id then dels[#dels + 1] = ukey end
        -- a job without lane, wait or parent (absent fields) enters none of
        -- their accounting
        local l = f[3] and lane_name(f[3])
        if l then lane_add(acc, l, 0, -1) end
        if f[6] then flow_outcome(fa, id, f[6], 'c' .. result) end
        if f[4] then
          refusal = flow_finish(fa, id, f[4], 'c', result)
          if refusal then return refusal end
        end
      end
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
if anykept then
  local t = rpcall('ZCARD', completed)
  if type(t) == 'table' then return t end
end
refusal = flow_types(fa, 0)
if refusal then return refusal end
-- the logs of the jobs deleted (when the joint check failed) and the flow
-- keys of the parents deleted are only deleted: refused where the writes
-- would start
if #gone > 0 and not may(gone, false, true) then return {err = E_NOPERM} end
ev_flow(evs, fa)
refusal = ev_xadd(evs)
if refusal then return refusal end

-- the time, for the retained jobs' scores and the parents' writes
local now = (#kept > 0 or #fa.list > 0) and now_ms()
rcall('ZREM', active, unpack(done))
local at = #kept > 0 and format('%d', now)
for i = 1, #kept do
  local k = kept[i]
  if k.result ~= '' then
    rcall('HSET', k.row, 'state', 'completed', 'res', k.result)
  else
    rcall('HSET', k.row, 'state', 'completed')
  end
  rcall('ZADD', completed, at, k.id)
end
if #dels > 0 then rcall('DEL', unpack(dels)) end
rcall('HINCRBY', stats, 'completed', #done)
local woke = #fa.list > 0 and flow_write(fa, now)
if lane_write(acc) then woke = true end
flow_push(fa)
if woke then signal_push(base .. 'signal') end
return out
