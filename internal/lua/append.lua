-- append.lua: EMQ.APPEND, write a batch of stream entries with explicit ids
-- to a bus stream of the queue: all of them or none.
--
-- KEYS[1] -> emq:{q}:             the queue base
-- KEYS[2] -> emq:{q}:version      string, the fence
-- KEYS[3] -> emq:{q}:bus:<name>   stream, the bus (name: protocol.ValidBusName)
-- ARGV[1] -> n, 1..1000 entries
-- then n entries: id nfields f1 v1 ... f_nfields v_nfields
--   id      -> ms-seq, each half a canonical decimal of at most 15 digits, not 0-0
--   nfields -> 1..1000 field/value pairs (any bytes)
--
-- Every id must be after the stream's top (XINFO STREAM last-generated-id;
-- 0-0 for an absent stream) and after the entry before it in the call.
--
-- Reply: integer n.
-- Refusals, in order: ERR EMQ append numkeys must be 3; ERR EMQ append wrong
-- number of arguments | bad count | bad fields (walking the entries); ERR EMQ
-- append bad key layout; ERR EMQ append bad id (entry by entry); the fence;
-- WRONGTYPE (the bus); EMQSTATE append id not after the stream top.

local VERB = 'append'
local refusal = shape(VERB, 3)
if refusal then return refusal end
if #ARGV == 0 then return e_arity(VERB) end
local n = uint(ARGV[1], 1, MAX_COUNT)
if not n then return e_bad(VERB, 'count') end
local starts, at = {}, 2
for i = 1, n do
  if at + 1 > #ARGV then return e_arity(VERB) end
  local nf = uint(ARGV[at + 1], 1, bus.MAX_FIELDS)
  if not nf then return e_bad(VERB, 'fields') end
  starts[i] = at
  at = at + 2 + 2 * nf
  if at - 1 > #ARGV then return e_arity(VERB) end
end
if at - 1 ~= #ARGV then return e_arity(VERB) end
refusal = bus.layout(VERB, 'bus:')
if refusal then return refusal end
local ms, seq = {}, {}
for i = 1, n do
  ms[i], seq[i] = bus.id(ARGV[starts[i]])
  if not ms[i] then return e_bad(VERB, 'id') end
end
refusal = fence()
if refusal then return refusal end

local top, err = bus.info(KEYS[3])
if not top then return err end
local tms, tseq = match(top, '^(%d+)%-(%d+)$')
for i = 1, n do
  if not bus.after(ms[i], seq[i], tms, tseq) then return e_not_after_top(VERB) end
  tms, tseq = ms[i], seq[i]
end

for i = 1, n do
  local s = starts[i]
  local nf = tonumber(ARGV[s + 1])
  rcall('XADD', KEYS[3], ARGV[s], unpack(ARGV, s + 2, s + 1 + 2 * nf))
end
return n
