-- install.lua: EMQ.INSTALL, stamp the queue's wire version. It runs no fence.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the wire version
-- ARGV    -> none
--
-- Reply: integer 1 after SET version 2 when the key was absent; 0 when it
-- already holds 2.
-- Refusals, in order: ERR EMQ install numkeys must be 2; ERR EMQ install wrong
-- number of arguments; ERR EMQ install bad key layout; WRONGTYPE (version);
-- EMQWIRE wire <v> found, 2 expected (1 included: no dataset is upgraded in
-- place).

local VERB = 'install'
local refusal = shape(VERB, 2, 0) or layout(VERB, {'version'})
if refusal then return refusal end

local v = rpcall('GET', KEYS[2])
if type(v) == 'table' then return v end
if v == '2' then return 0 end
if v then return e_wire_found(v) end

rcall('SET', KEYS[2], '2')
return 1
