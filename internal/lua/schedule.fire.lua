-- schedule.fire.lua: EMQ.SCHEDULE.FIRE, the schedule step's second phase:
-- enqueue a schedule's occurrences, computed by the client from the state
-- SCHEDULE.DUE read, and advance the schedule, exactly once.
--
-- KEYS[1] -> emq:{q}:           the queue base
-- KEYS[2] -> emq:{q}:version    string, the fence
-- KEYS[3] -> emq:{q}:meta       hash (ADD's)
-- KEYS[4] -> emq:{q}:stats      hash (ADD's)
-- KEYS[5] -> emq:{q}:pending    zset (ADD's)
-- KEYS[6] -> emq:{q}:delayed    zset (ADD's)
-- KEYS[7] -> emq:{q}:signal     list (ADD's)
-- KEYS[8] -> emq:{q}:schedules  hash, d:<id> and s:<id>
-- KEYS[9] -> emq:{q}:scheddue   zset, the active schedules by next due ms
-- ARGV    -> id rev from upto next n, then n pairs time jitter
--
-- The call is refused, writing nothing, unless the stored state has the
-- call's rev and last = from (a racing worker that fired first leaves a
-- later last): so an occurrence, always after from, is enqueued once.
-- The jobs are added with ADD's path (lib.lua addp), each with row fields
-- sched <id> sat <time> last. With a unique key in the template, at most
-- one job (the last time's), none when the key is held.
--
-- Reply: array of the new job ids, in time order.
-- Refusals, in order: ERR EMQ schedule.fire numkeys must be 9; wrong number
-- of arguments (fewer than 6); bad count; wrong number of arguments (not
-- 6 + 2n); bad key layout; bad id, rev, from, upto, next, time, jitter; the
-- fence; WRONGTYPE (schedules); EMQSTALE schedule.fire schedule changed;
-- EMQSTATE schedule.fire occurrence not due; EMQSTATE schedule.fire broken
-- definition; EMQSTATE schedule.fire occurrence outside the schedule;
-- NOPERM, WRONGTYPE (unique:<key>); ADD's refusals after its fence;
-- WRONGTYPE (scheddue); with events on, the events stream's refusals.

local VERB = 'schedule.fire'
local refusal = shape(VERB, 9)
if refusal then return refusal end
if #ARGV < 6 then return e_arity(VERB) end
local n = uint(ARGV[6], 0, MAX_COUNT)
if not n then return e_bad(VERB, 'count') end
if #ARGV ~= 6 + 2 * n then return e_arity(VERB) end
refusal = layout(VERB, {'version', 'meta', 'stats', 'pending', 'delayed', 'signal', 'schedules', 'scheddue'})
if refusal then return refusal end
local id = ARGV[1]
if not sched.id(id) then return e_bad(VERB, 'id') end
local rev = uint(ARGV[2], 1, sched.MAX_LIMIT)
if not rev then return e_bad(VERB, 'rev') end
local from = uint(ARGV[3], 0, sched.MAX_TIME)
if not from then return e_bad(VERB, 'from') end
local upto = uint(ARGV[4], from, sched.MAX_TIME)
if not upto then return e_bad(VERB, 'upto') end
local nxt = uint(ARGV[5], 0, sched.MAX_TIME)
if not nxt or (nxt ~= 0 and nxt <= upto) then return e_bad(VERB, 'next') end
local times, jitters, prev = {}, {}, from
for i = 1, n do
  local t = uint(ARGV[5 + 2 * i], prev + 1, upto)
  if not t then return e_bad(VERB, 'time') end
  local j = uint(ARGV[6 + 2 * i], 0, sched.MAX_JITTER)
  if not j then return e_bad(VERB, 'jitter') end
  times[i], jitters[i], prev = t, j, t
end
refusal = fence()
if refusal then return refusal end

local base, schedules, due = KEYS[1], KEYS[8], KEYS[9]
local f = rpcall('HMGET', schedules, 'd:' .. id, 's:' .. id)
if f.err then return f end
if not f[2] then return {err = sched.E_CHANGED} end
local st = sched.state(f[2])
if st.paused or st.rev ~= rev or st.last ~= from then return {err = sched.E_CHANGED} end
local now = now_ms()
if upto > now then return {err = sched.E_NOT_DUE} end
local D = f[1] and sched.decode(f[1])
local t = D and #D >= sched.FIXED and sched_check(VERB, D, 0)
if not t then return {err = sched.E_BROKEN} end
local def = t.def
if n > 0 then
  if (def.start > 0 and times[1] < def.start) or (def['end'] > 0 and times[n] > def['end'])
      or (def.limit > 0 and st.count + n > def.limit) then
    return {err = sched.E_OUTSIDE}
  end
  for i = 1, n do
    if jitters[i] > def.jitter then return {err = sched.E_OUTSIDE} end
  end
end

-- the occurrences that get a job
local jobs = {}
if n > 0 then
  if def.ukey ~= '' then
    local key = base .. 'unique:' .. def.ukey
    if not may({key}, true, true) then return {err = E_NOPERM} end
    local holder = rpcall('GET', key)
    if type(holder) == 'table' then return holder end
    if not holder then jobs[1] = n end
  else
    for i = 1, n do jobs[i] = i end
  end
end

-- the jobs as an ADD call's groups: the template, with each one's delay
local p, A = addp.new(t.cols, t.p.per), {}
for i = 1, #jobs do
  local o = jobs[i]
  local a = (i - 1) * p.per + 1
  for j = 1, p.per do A[a + j - 1] = t.group[j] end
  local delay = times[o] + jitters[o] - now
  A[a + 2] = format('%d', delay > 0 and delay or 0)
  refusal = addp.job(VERB, p, A, a, i)
  if refusal then return refusal end
  p.extra[i] = {'sched', id, 'sat', ARGV[5 + 2 * o]}
end
if #jobs > 0 then
  refusal = addp.read(p, A, KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7])
  if refusal then return refusal end
end
local c = rpcall('ZCARD', due)
if type(c) == 'table' then return c end
local evs = p.evs or {}
refusal = ev_xadd(evs)
if refusal then return refusal end

if #jobs > 0 then addp.write(p, A, now) end
st.count, st.last = st.count + n, upto
if (def.limit > 0 and st.count >= def.limit) or (def['end'] > 0 and nxt > def['end']) then nxt = 0 end
st.next = nxt
rcall('HSET', schedules, 's:' .. id, sched.fmt(st))
if nxt == 0 then
  rcall('ZREM', due, id)
else
  rcall('ZADD', due, format('%d', nxt), id)
end
return p.ids or {}
