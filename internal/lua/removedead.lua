-- removedead.lua: EMQ.REMOVEDEAD, REMOVE for the dead jobs a filter takes,
-- walking dead oldest first, at most limit examined per call. A dead job is
-- finished: no parent is told, no outcome pushed.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:stats     hash, counter removed
-- KEYS[4] -> emq:{q}:dead      zset, score = time of death ms
-- ARGV    -> limit after_score after_member min max lane error (a dead
--            filter, docs/PROTOCOL.md, "Dead filters")
--
-- Reply: [taken, examined, next_score, next_member].
-- Refusals, in order: ERR EMQ removedead numkeys must be 4; ERR EMQ
-- removedead wrong number of arguments; ERR EMQ removedead bad key layout;
-- ERR EMQ removedead bad limit|after|min|max|lane|error; the fence;
-- WRONGTYPE (dead); NOPERM (the rows, logs, kids, results, failures); per
-- member WRONGTYPE (its row); per unique key of a job taken NOPERM,
-- WRONGTYPE; WRONGTYPE (stats), the HINCRBY refusals (stats removed); with
-- events, the events stream's refusals (lib.lua ev_xadd).

local VERB = 'removedead'
local refusal = shape(VERB, 4, 7) or layout(VERB, {'version', 'stats', 'dead'})
if refusal then return refusal end
local flt
flt, refusal = ops.filter(VERB)
if not flt then return refusal end
refusal = fence()
if refusal then return refusal end

local base, stats, dead = KEYS[1], KEYS[3], KEYS[4]
local ids, scores, more = ops.walk(dead, flt)
if not ids then return scores end
local keys = {}
for i = 1, #ids do
  if jobid(ids[i]) then
    local row = base .. 'job:' .. ids[i]
    for _, s in ipairs({'', ':logs', ':kids', ':results', ':failures'}) do keys[#keys + 1] = row .. s end
  end
end
if first_denied(keys, true, true) then return {err = E_NOPERM} end

-- out: the members taken out of dead; dels: the keys deleted
local out, dels, n, evs = {}, {}, 0, {}
for i = 1, #ids do
  local id = ids[i]
  if not jobid(id) then
    out[#out + 1] = id
  else
    local row = base .. 'job:' .. id
    local f = rpcall('HMGET', row, 'att', 'state', 'lane', 'err', 'uniq', 'ev')
    if f.err then return f end
    if not f[1] then
      out[#out + 1] = id
    elseif ops.match(flt, f[2], f[3], f[4]) then
      out[#out + 1] = id
      n = n + 1
      for _, s in ipairs({'', ':logs', ':kids', ':results', ':failures'}) do dels[#dels + 1] = row .. s end
      if f[5] then
        local ukey = base .. 'unique:' .. f[5]
        if not may({ukey}, true, true) then return {err = E_NOPERM} end
        local holder = rpcall('GET', ukey)
        if type(holder) == 'table' then return holder end
        if holder == id then dels[#dels + 1] = ukey end
      end
      ev(evs, f[6], 'removed', id)
    end
  end
end
if #out == 0 then return ops.reply(0, ids, scores, more) end
if n > 0 then
  local c = rpcall('HGET', stats, 'removed')
  if type(c) == 'table' then return c end
  refusal = hincr_refusal(c, n)
  if refusal then return refusal end
end
refusal = ev_xadd(evs)
if refusal then return refusal end

rcall('ZREM', dead, unpack(out))
if #dels > 0 then rcall('DEL', unpack(dels)) end
if n > 0 then rcall('HINCRBY', stats, 'removed', n) end
return ops.reply(n, ids, scores, more)
