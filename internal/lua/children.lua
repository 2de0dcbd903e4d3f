-- children.lua: EMQ.CHILDREN, page a parent's children with their states,
-- results and errors.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- ARGV[1] -> id, the parent
-- ARGV[2] -> after, 0 or a job id: the page starts after it
-- ARGV[3] -> count, 1..1000
--
-- Reply: array of [child, state, result, error] (bulk; bulk, or null when the
-- row is gone; bulk or null; bulk or null), in id order, at most count.
-- Refusals, in order: ERR EMQ children numkeys must be 2; ERR EMQ children
-- wrong number of arguments; ERR EMQ children bad key layout; ERR EMQ
-- children bad id|after|count; the fence; NOPERM (kids, results, failures);
-- WRONGTYPE (kids); NOPERM (the children's rows); per child WRONGTYPE (its
-- row, results, failures).

local VERB = 'children'
local refusal = shape(VERB, 2, 3) or layout(VERB, {'version'})
if refusal then return refusal end
local id = ARGV[1]
if not jobid(id) then return e_bad(VERB, 'id') end
if not uint(ARGV[2], 0, MAX_ID) then return e_bad(VERB, 'after') end
local count = uint(ARGV[3], 1, MAX_COUNT)
if not count then return e_bad(VERB, 'count') end
refusal = fence()
if refusal then return refusal end

local row = KEYS[1] .. 'job:' .. id
local kids, results, failures = row .. ':kids', row .. ':results', row .. ':failures'
if not may({kids, results, failures}, true, false) then return {err = E_NOPERM} end
local ids = rpcall('ZRANGEBYSCORE', kids, '(' .. ARGV[2], '+inf', 'LIMIT', 0, count)
if ids.err then return ids end
local rows = {}
for i = 1, #ids do rows[i] = KEYS[1] .. 'job:' .. ids[i] end
if first_denied(rows, true, false) then return {err = E_NOPERM} end
local out = {}
for i = 1, #ids do
  -- a present row (att) without state is pending
  local f = rpcall('HMGET', rows[i], 'state', 'att')
  if f.err then return f end
  local state = f[1] or (f[2] and ROW_STATE)
  local res = rpcall('HGET', results, ids[i])
  if type(res) == 'table' then return res end
  local fail = rpcall('HGET', failures, ids[i])
  if type(fail) == 'table' then return fail end
  out[i] = {ids[i], state, res, fail}
end
return out
