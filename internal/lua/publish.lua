-- publish.lua: EMQ.PUBLISH, append one event to the queue's events stream,
-- branded as trafikey's.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:events    stream, the events
-- ARGV[1] -> event, 1..128 bytes
-- ARGV[2] -> id, the job's id
-- ARGV[3..] -> field value pairs, at most 1000 (any bytes)
--
-- Writes XADD events * brand emq event <event> id <id> [field value ...].
-- A stream whose first entry does not start with the pair brand emq is not
-- the queue's; an existing stream with no entry is taken as it is.
--
-- Reply: the entry id (bulk).
-- Refusals, in order: ERR EMQ publish numkeys must be 3; ERR EMQ publish
-- wrong number of arguments; ERR EMQ publish bad key layout; ERR EMQ publish
-- bad event|id; the fence; WRONGTYPE (events); EMQKIND publish wrong brand;
-- EMQSTATE publish id not after the stream top (no id left).

local VERB = 'publish'
local refusal = shape(VERB, 3)
if refusal then return refusal end
if #ARGV < 2 or #ARGV % 2 ~= 0 or #ARGV > 2 + 2 * bus.MAX_FIELDS then return e_arity(VERB) end
refusal = layout(VERB, {'version', 'events'})
if refusal then return refusal end
local event = ARGV[1]
if #event < 1 or #event > bus.MAX_EVENT then return e_bad(VERB, 'event') end
if not jobid(ARGV[2]) then return e_bad(VERB, 'id') end
refusal = fence()
if refusal then return refusal end

local top, first = bus.info(KEYS[3])
if not top then return first end
if first then
  local f = first[2]
  if type(f) ~= 'table' or f[1] ~= 'brand' or f[2] ~= 'emq' then return e_kind(VERB) end
end
if top == bus.LAST_ID then return e_not_after_top(VERB) end

local args = {'XADD', KEYS[3], '*', 'brand', 'emq', 'event', event, 'id', ARGV[2]}
for i = 3, #ARGV do args[#args + 1] = ARGV[i] end
return rcall(unpack(args))
