// Why: every decision that several processes must agree on happens inside Redis, in one Lua script
// per call, so it is atomic and it reads ONE clock (Redis `TIME`), never a process's. Processes
// only send outcomes and read back decisions; a skewed or paused process cannot move a deadline.
//
// BREAKER is the distributed twin of src/core/breaker.rs: the same states (closed / open /
// half-open / isolated), the same trip rules (rate: failures / outcomes >= failureRateThreshold,
// judged when a failure arrives once the window holds minimumCalls outcomes; consecutive:
// failureThreshold failures in a row), the same half-open rule (one probe at a time, its lease
// lapses after 2 x max(openDurationMs, 1); probesToClose successes close, one failure re-opens),
// and the same generations (an outcome from before a transition is stale and ignored).
// tests/js/shared-redis.test.mjs drives this script and the wasm core with the same outcome
// sequences and asserts the same state after every step. Change one, change the other.

export const BREAKER_LUA = `
-- steadfast breaker: the distributed twin of src/core/breaker.rs (see lib/shared/lua.js)
local h, w = KEYS[1], KEYS[2]
local op, kind = ARGV[1], ARGV[2]
local windowSize = tonumber(ARGV[3])
local threshold = tonumber(ARGV[4])
local minimumCalls = tonumber(ARGV[5])
local openMs = tonumber(ARGV[6])
local probesToClose = tonumber(ARGV[7])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- The hash is state from outside (anyone with access to this Redis can write it): every field is
-- range-checked as the core checks a snapshot, and a value outside what the rules can produce is
-- not believed. A state id or generation that is not one is reset (closed, generation 0); an open
-- deadline is clamped to now + openDurationMs (the core's latest_deadline) and a probe start to
-- now (a future one would hold the probe slot for good), both written back; counters outside
-- [0, their threshold) restart at 0; a window longer than windowSize is trimmed, and a failure
-- count that does not fit the window is recounted from it.
local function int(v, lo, hi)
  local n = tonumber(v)
  if n == nil or n ~= n or n < lo or n > hi or n ~= math.floor(n) then return nil end
  return n
end
local f = redis.call('HMGET', h, 's', 'u', 'g', 'pa', 'ps', 'cf', 'wf')
local s = int(f[1], 0, 3) or 0
-- (Clamped times are written back: clamped again on every read, to a moving now, never arriving.)
local u = tonumber(f[2]) or 0
if u ~= u then u = 0 elseif u > now + openMs then u = now + openMs; redis.call('HSET', h, 'u', u) end
local g = int(f[3], 0, 2147483647) or 0
local pa = tonumber(f[4])
if pa ~= nil and (pa ~= pa or pa > now) then pa = now; redis.call('HSET', h, 'pa', pa) end
local ps = int(f[5], 0, probesToClose - 1) or 0
local cf = int(f[6], 0, kind == 'consecutive' and threshold - 1 or 2147483647) or 0
local wf = 0
if kind ~= 'consecutive' then
  local len = redis.call('LLEN', w)
  if len > windowSize then redis.call('LTRIM', w, -windowSize, -1); len = windowSize; f[7] = nil end
  wf = int(f[7], 0, len)
  if wf == nil then
    wf = 0
    for _, v in ipairs(redis.call('LRANGE', w, 0, -1)) do if v == '1' then wf = wf + 1 end end
  end
end

-- Every key carries a TTL (no unbounded growth under many names): an untouched breaker's state
-- lapses after ttl ms (at least 24 h and 2 x openDurationMs) and reads as closed again.
local ttl = math.max(86400000, openMs * 2)
local function save()
  redis.call('HSET', h, 's', s, 'u', u, 'g', g, 'pa', pa or '', 'ps', ps, 'cf', cf, 'wf', wf)
  redis.call('PEXPIRE', h, ttl)
  if redis.call('EXISTS', w) == 1 then redis.call('PEXPIRE', w, ttl) end
end
local function bump() g = (g + 1) % 2147483648 end
local function forget() redis.call('DEL', w); wf = 0; cf = 0 end
local function open() s = 1; u = now + openMs; pa = nil; ps = 0; forget(); bump() end
local function close() s = 0; u = 0; pa = nil; ps = 0; forget(); bump() end
local function shown()
  if s == 1 and now >= u then return 2 end
  return s
end

if op == 'acquire' then
  if s == 0 then return {1, 0, g, 0, '0', -1} end
  if s == 1 then
    if now >= u then
      s = 2; pa = now; ps = 0; bump(); save()
      return {1, 2, g, 1, '0', 2}
    end
    return {0, 1, g, 0, tostring(u - now), -1}
  end
  if s == 2 then
    local expired = pa ~= nil and (now - pa) > math.max(openMs, 1) * 2
    if pa == nil or expired then
      if expired then bump() end
      pa = now; save()
      return {1, 2, g, 1, '0', -1}
    end
    return {0, 2, g, 0, '0', -1}
  end
  return {0, 3, g, 0, 'inf', -1}
end

if op == 'record' then
  local pg, probe, failed = tonumber(ARGV[8]), ARGV[9] == '1', ARGV[10] == '1'
  if pg ~= g then return {-1, shown()} end
  if s == 0 then
    if probe then return {-1, 0} end
    local trip
    if kind == 'consecutive' then
      if failed then cf = cf + 1 else cf = 0 end
      trip = cf >= threshold
    else
      local len = redis.call('RPUSH', w, failed and '1' or '0')
      if failed then wf = wf + 1 end
      if len > windowSize then
        if redis.call('LPOP', w) == '1' then wf = wf - 1 end
        len = len - 1
      end
      -- As the core: judged only when a failure arrives (so there is at least one), and divided
      -- (failures / outcomes >= threshold: the same doubles as Rust's f64).
      trip = failed and len >= minimumCalls and wf / len >= threshold
    end
    if trip then open(); save(); return {1, 1} end
    save()
    return {-1, 0}
  end
  if s == 2 and probe then
    if failed then open(); save(); return {1, 1} end
    ps = ps + 1
    if ps >= probesToClose then close(); save(); return {0, 0} end
    pa = nil; save()
    return {-1, 2}
  end
  return {-1, shown()}
end

-- An excluded outcome (core Outcome::Excluded): nothing is counted; a half-open probe of this
-- generation gives its slot back, so the next acquire may probe at once.
if op == 'release' then
  local pg, probe = tonumber(ARGV[8]), ARGV[9] == '1'
  if pg == g and s == 2 and probe and pa ~= nil then pa = nil; save() end
  return {-1, shown()}
end

if op == 'state' then
  if s == 1 and now < u then return {1, tostring(u - now)} end
  return {shown(), '0'}
end
if op == 'isolate' then
  if s == 3 then return {-1, 3} end
  s = 3; u = 0; pa = nil; ps = 0; forget(); bump(); save()
  return {3, 3}
end
if op == 'reset' then
  local was = s
  close(); save()
  if was == 0 then return {-1, 0} end
  return {0, 0}
end
return redis.error_reply('steadfast: unknown breaker op ' .. tostring(op))
`;

// IDEMPOTENCY: the distributed twin of src/core/idempotency.rs `Records` (same statuses, the same
// strict fingerprint rule — fingerprints are the core's SHA-256/128 in hex, an absent one is '' —
// the same maxRecords refusal and compare-and-set resolve). tests/js/shared-idempotency-twin.test.mjs
// drives this script and the wasm core with the same operation sequences and compares every answer.
//
// Keys (per bucket, one hash tag, so each script touches one cluster slot; redis.js picks a key's
// bucket): a hash per record (status, fingerprint,
// startedAt, owner token, lease, result/error), `unknown` (sorted set, score = startedAt: the
// reconciliation worklist), `inflight` (score = lease deadline) and `all` (score = the record's
// expiry: counts live records for maxRecords). Every record carries a TTL: done ttlMs, in flight
// lease + unknownTtlMs, unknown unknownTtlMs (30 days by default: reconcile before then). An
// in-flight record never expires into "free": when its owner's lease lapses it turns UNKNOWN. The
// record-key prefix is derived from KEYS (never from ARGV), so an ioredis keyPrefix applies to it.
// KEYS[5] is the bucket's epoch marker, KEYS[6] its write counter, KEYS[7] its ring of recent
// writes; ARGV[3] the marker the caller knows, ARGV[4] the highest counter it has seen with that
// write's nonce ('<counter>:<nonce>', or '<counter>' when it knows no nonce), and ARGV[5] the
// nonce this call records if it writes (all three removed before the ops read their arguments).
// Two ops write the marker itself and run before the epoch check, answering a word: 'amnesia' (the
// mark of a loss) and 'initialize' (first use's second phase). Every other op answers {counter
// before, counter after, the op's answer, the nonce of the write at the counter after ('' when the
// ring does not hold it), 1 if the write the caller saw was replaced (only an owner's completion
// answers that rather than refusing), else 0}.
//
// Every time kept in a record is Redis TIME, read here: a process sends durations only (its last
// attempt's age), never a time of its own clock.
export const IDEMPOTENCY_LUA = `
-- steadfast idempotency records (see lib/shared/lua.js)
local rec, unknown, inflight, all, epoch, counter, ring = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local op, key = ARGV[1], ARGV[2]
local expected = table.remove(ARGV, 3)
local seenArg = table.remove(ARGV, 3) or ''
local nonce = table.remove(ARGV, 3) or ''
local seen, seenNonce = string.match(seenArg, '^(%d+):(.*)$')
if seen then seen = tonumber(seen) else seen, seenNonce = tonumber(seenArg) or 0, '' end
-- A process found that Redis lost data: it leaves this mark on every bucket, so that every other
-- process, also one started later, refuses until acknowledgeAmnesia() writes a new epoch. A bucket
-- already at a newer generation than the finder knew (acknowledged meanwhile) is left alone.
if op == 'amnesia' then
  local known, text = tonumber(ARGV[3]) or 0, ARGV[4]
  local cur = redis.call('GET', epoch)
  local gen = cur and tonumber(string.match(cur, '^(%d+):'))
  if gen and gen > known then return 'newer' end
  redis.call('SET', epoch, text)
  return 'marked'
end
-- First use's second phase (redis.js initialize): generation 1 replaces this starter's own
-- generation-0 marker, and nothing else. Whatever else the bucket holds was written since the
-- first phase (an amnesia mark, an acknowledged newer generation, another starter's marker) or
-- lost (nothing): overwriting it would erase that news and let keys that may have been charged
-- run again, so it is left for the caller to judge. One script: a compare-and-set that Redis 7.0
-- can do (no SET IFEQ).
if op == 'initialize' then
  local from, to = ARGV[3], ARGV[4]
  if redis.call('GET', epoch) ~= from then return 'kept' end
  redis.call('SET', epoch, to)
  return 'set'
end
-- The epoch: every op but an owner's completion runs only if the bucket's marker is the one the
-- caller knows. A marker that is gone or other means Redis lost (or replaced) this bucket's data:
-- answering from what is left would run keys again.
if op ~= 'complete' then
  local mark = redis.call('GET', epoch)
  if mark ~= expected then return redis.error_reply('STEADFAST_EPOCH ' .. (mark or '')) end
end
-- The write counter: bumped by every op that may write, never decreasing while Redis keeps its
-- data. Below what the caller has seen, Redis went back in time (a restart from an older
-- snapshot, a failover to a replica that had not received the latest writes) and the records
-- written since are gone: as with a lost marker, nothing is answered. An owner's completion still
-- runs (it parks a record that is gone as unknown); the caller learns of the rollback from its answer.
--
-- The height alone is hidden by later writes: after a rollback from 100 to 80, processes that never
-- saw more than 80 write 81..105, and a caller that saw 100 finds 105. So each write also leaves
-- its identity in the ring (a hash of RING fields, the counter mod RING -> '<counter>:<nonce>', the
-- nonce the caller's, random per call), and the caller sends the nonce of the write at the counter
-- it saw. In one history a counter is written once, with one nonce: the ring holding that counter
-- with another nonce means the history the caller saw was lost and written over (refused as a
-- rollback). A field that holds another counter (RING or more writes since, or a writer that
-- does not keep the ring) or nothing tells nothing: the height check alone stands. One HMGET reads
-- both the field of the caller's counter and that of the current one (a read answers its nonce);
-- a write adds one HSET. The ring never holds more than RING fields: bounded, like the marker and
-- the counter, which carry no TTL either.
local RING = 64
local function slot(c) return tostring(c % RING) end
local function entry(v)
  local c, n = string.match(v or '', '^(%d+):(.*)$')
  return tonumber(c), n
end
local before = tonumber(redis.call('GET', counter)) or 0
local fields = redis.call('HMGET', ring, slot(seen), slot(before))
local diverged = false
if seen > 0 and seenNonce ~= '' and before >= seen then
  local c, n = entry(fields[1])
  diverged = c == seen and n ~= seenNonce
end
if op ~= 'complete' then
  if before < seen then return redis.error_reply('STEADFAST_ROLLBACK ' .. before) end
  if diverged then return redis.error_reply('STEADFAST_ROLLBACK ' .. before .. ' diverged') end
end
local writes = op == 'begin' or op == 'complete' or op == 'reopen' or op == 'resolve'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local recPrefix = string.sub(unknown, 1, #unknown - 7) .. 'r:'

local function expireAt(r, k, at)
  redis.call('PEXPIREAT', r, at)
  redis.call('ZADD', all, at, k)
end

-- An in-flight record whose lease lapsed becomes unknown (listed for reconciliation). A record
-- that exists but whose status is missing or not one this script writes (state from outside) is
-- never free: it is parked as unknown, listed for reconciliation, like a lapsed lease.
local function lapse(r, k, unknownTtl)
  local st, at, lu = unpack(redis.call('HMGET', r, 'st', 'at', 'lu'))
  if st ~= 'i' and st ~= 'd' and st ~= 'u' and redis.call('EXISTS', r) == 1 then
    if tonumber(at) == nil then at = now end
    redis.call('HSET', r, 'st', 'u', 'at', at, 'mp', '1', 'err', 'the record had no valid status (it was changed outside steadfast)')
    if unknownTtl then expireAt(r, k, now + unknownTtl) end
    redis.call('ZREM', inflight, k)
    redis.call('ZADD', unknown, at, k)
    writes = true
    return 'u'
  end
  if st == 'i' and lu and tonumber(lu) < now then
    writes = true
    -- The owner's last attempt may have started as late as the lease's end: reconcile counts from there.
    redis.call('HSET', r, 'st', 'u', 'mp', '1', 'lp', '1', 'err', 'owner lease expired: the process died or hung mid-call', 'la', lu)
    if unknownTtl then expireAt(r, k, now + unknownTtl) end
    redis.call('ZREM', inflight, k)
    redis.call('ZADD', unknown, at, k)
    return 'u'
  end
  return st
end

local function answer(st, at, res, err)
  if st == 'd' then return {'done', at, res} end
  if st == 'i' then return {'in-flight', at} end
  return {'unknown', at, err or ''}
end

local function dispatch()
if op == 'begin' then
  local fp, tok, leaseMs, maxRecords, unknownTtl = ARGV[3], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
  local st = lapse(rec, key, unknownTtl)
  if st then
    local rfp, at, res, err = unpack(redis.call('HMGET', rec, 'fp', 'at', 'res', 'err'))
    if (rfp or '') ~= fp then return {'mismatch'} end
    return answer(st, at, res, err)
  end
  -- Live records: members of \`all\` not past their expiry (ZCOUNT is O(log N)). Expired members
  -- are trimmed at most 100 per call, so no begin's work grows with how many expired at once.
  local expired = redis.call('ZRANGEBYSCORE', all, '-inf', now, 'LIMIT', 0, 100)
  if #expired > 0 then redis.call('ZREM', all, unpack(expired)) end
  if redis.call('ZCARD', all) - redis.call('ZCOUNT', all, '-inf', now) >= maxRecords then return {'full'} end
  redis.call('HSET', rec, 'st', 'i', 'fp', fp, 'at', now, 'tok', tok, 'lu', now + leaseMs)
  expireAt(rec, key, now + leaseMs + unknownTtl)
  redis.call('ZADD', inflight, now + leaseMs, key)
  return {'run', tostring(now)}
end

if op == 'complete' then
  local tok, outcome, payload, ttlMs, unknownTtl, fp = ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8]
  -- What reconcile needs of an unknown record: last attempt's start, attempts, settle window. The
  -- last attempt's start comes as its age (ms before now, on the owner's own clock: a duration, so
  -- the owner's wall clock does not matter) and is kept in Redis time, between the record's start
  -- and now.
  local age, n, sw, ep = tonumber(ARGV[9]), ARGV[10] or '', ARGV[11] or '', ARGV[12] or ''
  local st, rtok, at = unpack(redis.call('HMGET', rec, 'st', 'tok', 'at'))
  local la = ''
  if age ~= nil and age == age then
    la = now - math.max(0, math.floor(age))
    if tonumber(at) ~= nil and la < tonumber(at) then la = tonumber(at) end
  end
  if not st then
    -- The record was settled (reconciled as failed) or expired while its owner still ran. A late
    -- success or unknown means money may have moved: never drop it, park it as unknown again.
    if outcome == 'failed' or outcome == 'refuted' then return 'late' end
    redis.call('HSET', rec, 'st', 'u', 'fp', fp, 'at', now, 'tok', tok, 'err', 'late owner completion (' .. outcome .. ') after the record was settled: ' .. payload)
    expireAt(rec, key, now + unknownTtl)
    redis.call('ZADD', unknown, now, key)
    return 'late'
  end
  if rtok ~= tok then return 'late' end
  if st == 'd' then return 'ok' end
  redis.call('ZREM', inflight, key)
  -- The sticky rule (core::idempotency): a record that may have been processed (it was parked
  -- unknown, then reopened by a re-send) is not freed by a definitive answer: unknown again.
  local answer = 'ok'
  if outcome == 'failed' and redis.call('HGET', rec, 'mp') == '1' then
    outcome = 'unknown'
    answer = 'parked'
  end
  if outcome == 'done' then
    redis.call('HSET', rec, 'st', 'd', 'res', payload)
    redis.call('HDEL', rec, 'err', 'lp', 'la', 'n', 'sw', 'ep')
    redis.call('ZREM', unknown, key)
    expireAt(rec, key, now + ttlMs)
  elseif outcome == 'unknown' then
    redis.call('HSET', rec, 'st', 'u', 'mp', '1', 'err', payload, 'la', la, 'n', n, 'sw', sw, 'ep', ep)
    expireAt(rec, key, now + unknownTtl)
    redis.call('ZADD', unknown, at, key)
  else
    redis.call('DEL', rec)
    redis.call('ZREM', unknown, key)
    redis.call('ZREM', all, key)
  end
  return answer
end

-- Reconciliation's re-send (core::idempotency Records::reopen): an unknown record goes back to
-- in flight on the same record, for the same request only, compare-and-set on its start when
-- given. Nothing is deleted: a crash after this leaves an in-flight record whose lease lapses
-- back to unknown.
if op == 'reopen' then
  local fp, tok, leaseMs, expectAt, unknownTtl = ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
  local st = lapse(rec, key, unknownTtl)
  if not st then return {'not-found'} end
  if (redis.call('HGET', rec, 'fp') or '') ~= fp then return {'mismatch'} end
  if st ~= 'u' then return {'wrong-state'} end
  if expectAt ~= '' and redis.call('HGET', rec, 'at') ~= expectAt then return {'wrong-state'} end
  redis.call('HSET', rec, 'st', 'i', 'at', now, 'tok', tok, 'lu', now + leaseMs)
  redis.call('HDEL', rec, 'lp')
  redis.call('ZREM', unknown, key)
  expireAt(rec, key, now + leaseMs + unknownTtl)
  redis.call('ZADD', inflight, now + leaseMs, key)
  return {'reopened', tostring(now)}
end

if op == 'peek' then
  local st = lapse(rec, key, tonumber(ARGV[3]))
  if not st then return {} end
  local at, res, err, la, n, sw, ep = unpack(redis.call('HMGET', rec, 'at', 'res', 'err', 'la', 'n', 'sw', 'ep'))
  if st == 'u' then return {'unknown', at, err or '', la or '', n or '', sw or '', ep or ''} end
  return answer(st, at, res, err)
end

if op == 'resolve' then
  local outcome, payload, ttlMs, expectAt, unknownTtl = ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
  local st = lapse(rec, key, unknownTtl)
  if not st then return 'not-found' end
  if st ~= 'u' then return 'wrong-state' end
  if expectAt ~= '' and redis.call('HGET', rec, 'at') ~= expectAt then return 'wrong-state' end
  redis.call('ZREM', unknown, key)
  if outcome == 'done' then
    redis.call('HSET', rec, 'st', 'd', 'res', payload)
    redis.call('HDEL', rec, 'err', 'lp', 'la', 'n', 'sw')
    expireAt(rec, key, now + ttlMs)
  else
    redis.call('DEL', rec)
    redis.call('ZREM', all, key)
  end
  return 'resolved'
end

-- One page of the reconciliation list, after the cursor (the last member the previous page scanned
-- and its score; '' to start). A cursor, not a rank: a record that goes unknown meanwhile is
-- inserted at its start time, anywhere in the set, and would shift every rank after it (listing
-- keys twice and skipping others when processes lapse records in another order than they started,
-- e.g. with different inFlightLeaseMs). The cursor's place is found by adding, for a moment, the
-- member just after it (cursor .. NUL: no key holds a NUL), so it holds even if the cursor's own
-- record was settled meanwhile. First, lapse at most \`limit\` in-flight records whose lease ran out;
-- at the start of a pass, a full batch of lapses answers {-1} (call again): the pass lists only
-- once every record whose lease lapsed before it began is on the list. Records that go unknown
-- during the pass are listed by it or by the next one, never twice. Returns {scanned, last,
-- lastScore, key, startedAt, ...}; the pass ends when scanned < limit. Every call is O(limit log N).
if op == 'unknown' then
  local cursor, cursorScore, limit, unknownTtl = ARGV[3], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
  local lapsed = redis.call('ZRANGEBYSCORE', inflight, '-inf', '(' .. now, 'LIMIT', 0, limit)
  for _, k in ipairs(lapsed) do
    if not lapse(recPrefix .. k, k, unknownTtl) then redis.call('ZREM', inflight, k) end
  end
  if cursor == '' and #lapsed == limit then return {-1} end
  local start = 0
  if cursor ~= '' then
    local after = cursor .. '\\0'
    redis.call('ZADD', unknown, cursorScore, after)
    start = redis.call('ZRANK', unknown, after)
    redis.call('ZREM', unknown, after)
  end
  local page = redis.call('ZRANGE', unknown, start, start + limit - 1, 'WITHSCORES')
  local out = {#page / 2, '', ''}
  if #page > 0 then out[2], out[3] = page[#page - 1], page[#page] end
  for i = 1, #page, 2 do
    local k = page[i]
    if redis.call('EXISTS', recPrefix .. k) == 1 then
      out[#out + 1] = k
      out[#out + 1] = page[i + 1]
    else
      redis.call('ZREM', unknown, k)
    end
  end
  return out
end
return redis.error_reply('steadfast: unknown idempotency op ' .. tostring(op))
end

local reply = dispatch()
if type(reply) == 'table' and reply.err then return reply end
local after, afterNonce = before, ''
if writes then
  after = redis.call('INCR', counter)
  afterNonce = nonce ~= '' and nonce or (t[1] .. '.' .. t[2])
  redis.call('HSET', ring, slot(after), after .. ':' .. afterNonce)
else
  local c, n = entry(fields[2])
  if c == before then afterNonce = n end
end
return {before, after, reply, afterNonce, diverged and 1 or 0}
`;
