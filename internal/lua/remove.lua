-- remove.lua: EMQ.REMOVE, delete a job that no worker holds (pending,
-- delayed, dead, waiting or a retained completed one): its row, its logs,
-- its flow keys and its unique key; with cascade, a waiting parent and its
-- descendants.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:stats     hash, counter removed
-- KEYS[4] -> emq:{q}:pending   zset
-- KEYS[5] -> emq:{q}:delayed   zset
-- KEYS[6] -> emq:{q}:active    zset (declared, never touched)
-- KEYS[7] -> emq:{q}:dead      zset
-- ARGV[1] -> id
-- ARGV[2] -> cascade, 0 or 1: remove a waiting parent with its descendants
--
-- Reply: integer 1; 0 when the row is gone.
-- Refusals, in order: ERR EMQ remove numkeys must be 7; ERR EMQ remove wrong
-- number of arguments; ERR EMQ remove bad key layout; ERR EMQ remove bad id;
-- ERR EMQ remove bad cascade; the fence; NOPERM, WRONGTYPE (the row);
-- EMQSTATE remove job is active; EMQSTATE remove has children (waiting,
-- cascade 0); NOPERM, WRONGTYPE (unique:<uniq>); with cascade, level by
-- level: WRONGTYPE (kids), per child NOPERM (its row, logs, flow keys),
-- WRONGTYPE (its row), EMQSTATE remove job is active, NOPERM, WRONGTYPE (its
-- unique key); the parents' refusals (lib.lua flow_finish); the lane
-- accounting's refusals (dw = -1 per pending job with a lane; it types
-- lane:<l>); WRONGTYPE (stats), the HINCRBY refusals (stats removed);
-- WRONGTYPE (the states' sets); the flow types' refusals; NOPERM (the
-- root's logs and flow keys); with events, the events stream's refusals
-- (lib.lua ev_xadd).

local VERB = 'remove'
local refusal = shape(VERB, 7, 2) or layout(VERB, {'version', 'stats', 'pending', 'delayed', 'active', 'dead'})
if refusal then return refusal end
local id = ARGV[1]
if not jobid(id) then return e_bad(VERB, 'id') end
local cascade = ARGV[2]
if cascade ~= '0' and cascade ~= '1' then return e_bad(VERB, 'cascade') end
refusal = fence()
if refusal then return refusal end

local base, stats = KEYS[1], KEYS[3]
local sets = {pending = KEYS[4], delayed = KEYS[5], dead = KEYS[7], waiting = base .. 'waiting',
  completed = base .. 'completed'}
local function gone_keys(row)
  return {row .. ':logs', row .. ':kids', row .. ':results', row .. ':failures'}
end
local row = base .. 'job:' .. id
local rootgone = gone_keys(row)
local all = may({row, rootgone[1], rootgone[2], rootgone[3], rootgone[4]}, true, true)
if not all and not may({row}, true, true) then return {err = E_NOPERM} end

-- jobs[i]: {id, row, state, lane, parent, wait, ev, ukey, holder}
local jobs, inset = {}, {}
local function read_job(jid, jrow)
  local f = rpcall('HMGET', jrow, 'att', 'state', 'uniq', 'lane', 'parent', 'wait', 'ev')
  if f.err then return nil, f end
  if not f[1] then return false end
  if f[2] == 'active' then return nil, {err = E_REMOVE_ACTIVE} end
  return {id = jid, row = jrow, state = f[2] or ROW_STATE, uniq = f[3], lane = lane_name(f[4]), parent = f[5], wait = f[6],
    ev = f[7]}
end
local function read_unique(j)
  if not j.uniq then return nil end
  j.ukey = base .. 'unique:' .. j.uniq
  if not may({j.ukey}, true, true) then return {err = E_NOPERM} end
  local holder = rpcall('GET', j.ukey)
  if type(holder) == 'table' then return holder end
  j.holder = holder
end
local root, r = read_job(id, row)
if root == nil then return r end
if not root then return 0 end
if root.state == 'waiting' and cascade ~= '1' then return {err = E_REMOVE_HAS_CHILDREN} end
refusal = read_unique(root)
if refusal then return refusal end
jobs[1], inset[id] = root, true

-- with cascade, the descendants, level by level through the kids sets
if root.state == 'waiting' then
  local i = 1
  while i <= #jobs and #jobs < MAX_COUNT do
    local j = jobs[i]
    if j.state == 'waiting' then
      -- the kids set is read here: the caller may be allowed to delete it
      -- and not to read it
      if not may({j.row .. ':kids'}, true, false) then return {err = E_NOPERM} end
      local kids = rpcall('ZRANGE', j.row .. ':kids', 0, MAX_COUNT - #jobs - 1)
      if kids.err then return kids end
      for k = 1, #kids do
        local cid = kids[k]
        if jobid(cid) and not inset[cid] and #jobs < MAX_COUNT then
          local crow = base .. 'job:' .. cid
          local ck = gone_keys(crow)
          if first_denied({crow, ck[1], ck[2], ck[3], ck[4]}, true, true) then return {err = E_NOPERM} end
          local c, cr = read_job(cid, crow)
          if c == nil then return cr end
          if c then
            refusal = read_unique(c)
            if refusal then return refusal end
            jobs[#jobs + 1], inset[cid] = c, true
          end
        end
      end
    end
    i = i + 1
  end
end

-- the parents outside the removal of the unfinished jobs removed, the lanes
local acc = lane_acc()
local fa = flow_acc(acc)
local nremoved, states = 0, {}
for i = 1, #jobs do
  local j = jobs[i]
  local unfinished = j.state == 'pending' or j.state == 'delayed' or j.state == 'waiting'
  if unfinished then
    flow_outcome(fa, j.id, j.wait, 'r')
    if not inset[j.parent or ''] then
      refusal = flow_finish(fa, j.id, j.parent, 'r', '')
      if refusal then return refusal end
    end
  end
  if j.state == 'pending' and j.lane then
    lane_add(acc, j.lane, -1, 0)
    j.set = base .. 'lane:' .. j.lane
  else
    j.set = sets[j.state or '']
    if j.set then states[#states + 1] = j.set end
  end
  if j.state ~= 'completed' then nremoved = nremoved + 1 end
end
refusal = lane_read(acc)
if refusal then return refusal end
if nremoved > 0 then
  local c = rpcall('HGET', stats, 'removed')
  if type(c) == 'table' then return c end
  refusal = hincr_refusal(c, nremoved)
  if refusal then return refusal end
end
for i = 1, #states do
  local t = rpcall('ZCARD', states[i])
  if type(t) == 'table' then return t end
end
refusal = flow_types(fa, 0)
if refusal then return refusal end
if not all and not may(rootgone, false, true) then return {err = E_NOPERM} end
local evs = {}
for i = 1, #jobs do ev(evs, jobs[i].ev, 'removed', jobs[i].id) end
ev_flow(evs, fa)
refusal = ev_xadd(evs)
if refusal then return refusal end

local now = now_ms()
for i = 1, #jobs do
  local j = jobs[i]
  if j.set then rcall('ZREM', j.set, j.id) end
  rcall('DEL', j.row, unpack(gone_keys(j.row)))
  if j.holder == j.id then rcall('DEL', j.ukey) end
end
if nremoved > 0 then rcall('HINCRBY', stats, 'removed', nremoved) end
local woke = flow_write(fa, now)
if lane_write(acc) then woke = true end
flow_push(fa)
if woke then signal_push(base .. 'signal') end
return 1
