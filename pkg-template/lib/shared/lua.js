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

local f = redis.call('HMGET', h, 's', 'u', 'g', 'pa', 'ps', 'cf', 'wf')
local s = tonumber(f[1]) or 0
local u = tonumber(f[2]) or 0
local g = tonumber(f[3]) or 0
local pa = tonumber(f[4])
local ps = tonumber(f[5]) or 0
local cf = tonumber(f[6]) or 0
local wf = tonumber(f[7]) or 0

local function save()
  redis.call('HSET', h, 's', s, 'u', u, 'g', g, 'pa', pa or '', 'ps', ps, 'cf', cf, 'wf', wf)
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

// IDEMPOTENCY: one hash per key (status, fingerprint, startedAt, owner token, lease, result/error),
// a sorted set of unknown keys (score = startedAt: the reconciliation worklist, oldest first) and a
// sorted set of in-flight keys (score = lease deadline). Creation is atomic (the script is the
// SET NX). An in-flight record never expires into "free": when its owner's lease lapses (the
// process died or hangs mid-charge) it turns UNKNOWN and is persisted, so a restarted process still
// refuses a blind retry. Done records expire after ttlMs (24 h by default); a definitive failure
// deletes the record (the charge never happened: the key is free).
export const IDEMPOTENCY_LUA = `
-- steadfast idempotency records (see lib/shared/lua.js)
local rec, unknown, inflight = KEYS[1], KEYS[2], KEYS[3]
local op, key = ARGV[1], ARGV[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- An in-flight record whose lease lapsed becomes unknown (persisted, listed for reconciliation).
local function lapse(r, k)
  local st, at, lu = unpack(redis.call('HMGET', r, 'st', 'at', 'lu'))
  if st == 'i' and lu and tonumber(lu) < now then
    -- The owner's last attempt may have started as late as the lease's end: reconcile counts from there.
    redis.call('HSET', r, 'st', 'u', 'err', 'owner lease expired: the process died or hung mid-call', 'la', lu)
    redis.call('PERSIST', r)
    redis.call('ZREM', inflight, k)
    redis.call('ZADD', unknown, at, k)
    return 'u'
  end
  return st
end

if op == 'begin' then
  local fp, tok, leaseMs, safetyMs = ARGV[3], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
  local st = lapse(rec, key)
  if st then
    local rfp, at, res, err = unpack(redis.call('HMGET', rec, 'fp', 'at', 'res', 'err'))
    if fp ~= '' and rfp ~= '' and rfp ~= fp then return {'mismatch'} end
    if st == 'd' then return {'done', at, res} end
    if st == 'i' then return {'in-flight', at} end
    return {'unknown', at, err or ''}
  end
  redis.call('HSET', rec, 'st', 'i', 'fp', fp, 'at', now, 'tok', tok, 'lu', now + leaseMs)
  redis.call('ZADD', inflight, now + leaseMs, key)
  return {'run', tostring(now)}
end

if op == 'complete' then
  local tok, outcome, payload, ttlMs = ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
  local la, n, sw = ARGV[7] or '', ARGV[8] or '', ARGV[9] or ''
  local st, rtok, at = unpack(redis.call('HMGET', rec, 'st', 'tok', 'at'))
  if not st or rtok ~= tok or st == 'd' then return 0 end
  redis.call('ZREM', inflight, key)
  if outcome == 'done' then
    redis.call('HSET', rec, 'st', 'd', 'res', payload)
    redis.call('HDEL', rec, 'err', 'la', 'n', 'sw')
    redis.call('ZREM', unknown, key)
    redis.call('PEXPIRE', rec, ttlMs)
  elseif outcome == 'unknown' then
    redis.call('HSET', rec, 'st', 'u', 'err', payload, 'la', la, 'n', n, 'sw', sw)
    redis.call('PERSIST', rec)
    redis.call('ZADD', unknown, at, key)
  else
    redis.call('DEL', rec)
    redis.call('ZREM', unknown, key)
  end
  return 1
end

if op == 'peek' then
  local st = lapse(rec, key)
  if not st then return {} end
  local at, res, err, la, n, sw = unpack(redis.call('HMGET', rec, 'at', 'res', 'err', 'la', 'n', 'sw'))
  if st == 'd' then return {'done', at, res} end
  if st == 'i' then return {'in-flight', at} end
  return {'unknown', at, err or '', la or '', n or '', sw or ''}
end

if op == 'resolve' then
  local outcome, payload, ttlMs = ARGV[3], ARGV[4], tonumber(ARGV[5])
  local st = lapse(rec, key)
  if not st then return -2 end
  if st ~= 'u' then return -3 end
  redis.call('ZREM', unknown, key)
  if outcome == 'done' then
    redis.call('HSET', rec, 'st', 'd', 'res', payload)
    redis.call('HDEL', rec, 'err', 'tok', 'la', 'n', 'sw')
    redis.call('PEXPIRE', rec, ttlMs)
  else
    redis.call('DEL', rec)
  end
  return 1
end

if op == 'unknown' then
  local prefix = ARGV[3]
  for _, k in ipairs(redis.call('ZRANGEBYSCORE', inflight, '-inf', '(' .. now)) do
    if not lapse(prefix .. k, k) then redis.call('ZREM', inflight, k) end
  end
  return redis.call('ZRANGE', unknown, 0, -1)
end
return redis.error_reply('steadfast: unknown idempotency op ' .. tostring(op))
`;
