// Why: in a browser, "many processes" means many tabs of one origin and the same tab after a reload.
// A breaker that tripped in one tab should fail fast in all of them, and a checkout whose charge was
// in flight when the page reloaded (or that a second tab opens) must reuse its idempotency key and
// show "in flight / checking" instead of charging again.

import { CircuitBreaker } from '../breaker.js';
import { newIdempotencyKey } from '../idempotency.js';
import { canonicalCharge } from '../canonical.js';
import { fingerprintHex } from '../fingerprint.js';
import { validKey } from '../idempotency-key.js';
import { IdempotencyKeyReuseError, StoreFullError } from '../errors.js';
import { StateStoreUnavailableError } from './errors.js';
import { messageOf } from '../unknown.js';
import * as o from '../options.js';

/** The checkout client's SENDING charge option (lib/checkout.js): the endpoint each request is about to go to. */
const SENDING = Symbol.for('steadfast.sending');

/**
 * Share `breaker`'s trips across tabs through a BroadcastChannel. Wire the returned
 * `onStateChange` into the breaker's own option (it is only called after construction):
 *
 *   const breaker = new CircuitBreaker({ ...options, onStateChange: (s) => tabs.onStateChange(s) });
 *   const tabs = shareBreakerAcrossTabs(breaker, { channel: 'payments' });
 *
 * A trip ('open') is broadcast with its deadline (toJSON().openUntil, Date.now-based: same machine,
 * same clock); peers call openUntil(deadline), which clamps it to now + openDurationMs. A tab that
 * opens later asks ('hello') and an open peer answers with its deadline.
 *
 * A message may make a peer more careful (open it), never less, unless it carries proof: a close
 * is believed only from the tab that ran the successful probe. The tab that takes the half-open
 * probe announces a lease (`{ type: 'probe', lease }`, the SHA-256/128 of a random secret it keeps);
 * when its probe closes the circuit it sends `{ type: 'closed', lease, proof }` with the secret. A
 * peer closes only if its own cooldown is over (it reads half-open: a close can never cut an open
 * period short), it heard that lease announced while its cooldown was over, and the proof hashes to
 * it. Limit: any same-origin script runs with the page's authority, so it can announce a lease of
 * its own and then "close" it — but only once the cooldown is over, exactly when the tab itself
 * would admit a probe; it cannot close a breaker during its cooldown, replay another tab's proof, or
 * close an isolated one. A tab's own `reset()` stays local (there is no probe to prove), unless
 * that tab holds the half-open probe at the time (its reset then ends the probe it announced).
 *
 * Any same-origin script can post on the channel: a message that is not one of these shapes (or an
 * `until` that is not a finite number), or a close without valid proof, is ignored and reported to
 * `onRemote` as `{ type: 'invalid', reason }`; nothing a message carries can throw out of the handler.
 */
export function shareBreakerAcrossTabs(breaker, options) {
  const where = 'shareBreakerAcrossTabs';
  if (!(breaker instanceof CircuitBreaker)) throw o.typeError(where, 'breaker', 'a CircuitBreaker', breaker);
  const opts = o.misspelt(o.object(options, where, true), ['channel', 'BroadcastChannel', 'onRemote'], where);
  const name = o.own(opts, 'channel') ?? 'steadfast:breaker';
  if (typeof name !== 'string' || name.length === 0) throw o.typeError(where, 'channel', 'a non-empty string', name);
  const Channel = o.own(opts, 'BroadcastChannel') ?? globalThis.BroadcastChannel;
  if (typeof Channel !== 'function') throw o.typeError(where, 'BroadcastChannel', 'a BroadcastChannel constructor (none in this environment)', Channel);
  const onRemote = o.fn(opts, 'onRemote', where);
  const channel = new Channel(name);
  let applying = false;
  let closed = false;
  /** This tab's probe lease while it holds the half-open probe: `{ lease, secret }`. */
  let mine;
  /** Leases peers announced while this tab's cooldown was over (bounded: a flood cannot grow it). */
  const leases = new Set();
  const LEASES_MAX = 16;
  const LEASE = /^[0-9a-f]{32}$/;
  const post = (message) => {
    if (!closed) channel.postMessage(message);
  };
  const announceOpen = () => {
    const snap = breaker.toJSON();
    if (snap.state === 'open' && snap.openUntil !== null) post({ type: 'open', until: snap.openUntil });
  };
  const apply = (fn) => {
    applying = true;
    try {
      fn();
    } finally {
      applying = false;
    }
  };
  const report = (event) => {
    try {
      onRemote?.(event);
    } catch {
      // a throwing listener must not break the channel
    }
  };
  channel.onmessage = (event) => {
    try {
      const m = event?.data;
      const type = m !== null && typeof m === 'object' ? o.own(m, 'type') : undefined;
      if (type === 'open') {
        const until = o.own(m, 'until');
        if (typeof until !== 'number' || !Number.isFinite(until)) return report({ type: 'invalid', reason: 'open without a finite until' });
        apply(() => breaker.openUntil(until)); // clamped to now + openDurationMs by the core
        report({ type: 'open', until });
      } else if (type === 'probe') {
        const lease = o.own(m, 'lease');
        if (typeof lease !== 'string' || !LEASE.test(lease)) return report({ type: 'invalid', reason: 'probe without a lease' });
        // Only a tab past its own cooldown may be probing: an announcement during it earns nothing.
        if (breaker.isolated || breaker.currentState !== 'half-open') return report({ type: 'invalid', reason: 'probe announced during the cooldown' });
        if (leases.size >= LEASES_MAX) leases.clear();
        leases.add(lease);
        report({ type: 'probe', lease });
      } else if (type === 'closed') {
        if (breaker.currentState === 'closed' && !breaker.isolated) return report({ type: 'closed' });
        const lease = o.own(m, 'lease');
        const proof = o.own(m, 'proof');
        if (breaker.isolated || breaker.currentState !== 'half-open') return report({ type: 'invalid', reason: 'closed during the cooldown' });
        if (typeof lease !== 'string' || !leases.has(lease) || typeof proof !== 'string' || proof.length > 64 || fingerprintHex(proof) !== lease) {
          return report({ type: 'invalid', reason: 'closed without proof of a successful probe' });
        }
        leases.clear();
        apply(() => breaker.reset());
        report({ type: 'closed' });
      } else if (type === 'hello') {
        announceOpen();
      } else {
        report({ type: 'invalid', reason: 'unknown message' });
      }
    } catch (error) {
      report({ type: 'invalid', reason: messageOf(error) });
    }
  };
  post({ type: 'hello' });
  return {
    channel: name,
    /** Call from the breaker's onStateChange: broadcasts this tab's own transitions. */
    onStateChange(state) {
      if (applying) return;
      if (state === 'half-open') {
        // This tab took the probe: announce a lease only it can prove (no CSPRNG: no lease, and
        // its close stays local).
        if (typeof globalThis.crypto?.getRandomValues !== 'function') return;
        const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
        const secret = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
        mine = { secret, lease: fingerprintHex(secret) };
        post({ type: 'probe', lease: mine.lease });
        return;
      }
      if (state === 'open') announceOpen();
      else if (state === 'closed' && mine !== undefined) post({ type: 'closed', lease: mine.lease, proof: mine.secret });
      mine = undefined;
      leases.clear();
    },
    /** Stop sharing (the breaker keeps working alone). */
    close() {
      closed = true;
      channel.close();
    },
  };
}

const SETTLED = new Set(['succeeded', 'declined']);
const STATUSES = new Set(['new', 'in-flight', 'unknown', 'succeeded', 'declined']);
const PREFIX = 'steadfast:checkout:';
/** A cart's entry is kept this long (the gateway's key retention: Stripe keeps keys 24 h). */
export const CHECKOUT_KEY_MAX_AGE_MS = 86_400_000;
/** At most this many cart entries are kept in one storage (oldest pruned first). */
export const CHECKOUT_KEY_MAX_ENTRIES = 100;

const isTime = (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
/** Statuses whose key may have been sent without a known outcome: never aged out, evicted or replaced. */
const OPEN = new Set(['in-flight', 'unknown']);

/**
 * A stored entry, validated: anything a same-origin script or an old version could have written
 * that is not exactly our shape is treated as absent (and replaced), never trusted. Only the shape:
 * whether it is still current is `current()`.
 */
function validEntry(v) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const key = o.own(v, 'key');
  const status = o.own(v, 'status');
  if (typeof key !== 'string' || !validKey(key) || !STATUSES.has(status) || !isTime(o.own(v, 'createdAt'))) return false;
  const firstUsedAt = o.own(v, 'firstUsedAt');
  if (firstUsedAt !== undefined && !isTime(firstUsedAt)) return false;
  const fp = o.own(v, 'fp');
  if (fp !== undefined && !(typeof fp === 'string' && /^[0-9a-f]{32}$/.test(fp))) return false;
  if (SETTLED.has(status)) {
    const outcome = o.own(v, 'outcome');
    if (outcome === null || typeof outcome !== 'object' || o.own(outcome, 'status') !== status || o.own(outcome, 'key') !== key) return false;
  }
  return true;
}

/** A stored text as JSON (null for no entry), or undefined when it is not JSON. */
function parsed(raw) {
  try {
    return JSON.parse(raw ?? 'null');
  } catch {
    return undefined;
  }
}

/**
 * Whether a valid entry is still kept. An in-flight or unknown entry (its key may have been
 * processed) always is: dropping it would let a reload charge the cart again under a new key, so
 * neither its age nor a clock set back can end it — only settling or `clear()`. A settled entry ages
 * from the key's first use (the gateway's retention counts from there); a `new` one (never sent)
 * from its creation, and one dated more than a minute ahead of the clock is stale too.
 */
function current(v, now, maxAgeMs) {
  if (OPEN.has(v.status)) return true;
  if (v.status === 'new') return v.createdAt <= now + 60_000 && now - v.createdAt <= maxAgeMs;
  return now - (isTime(v.firstUsedAt) ? v.firstUsedAt : v.createdAt) <= maxAgeMs;
}

/**
 * Drop our entries that are malformed or no longer current, then the oldest settled or `new` ones
 * past `maxEntries`. An entry whose read throws is kept (reported): unreadable is not absent.
 * Returns how many entries are left that may not be evicted (in flight, unknown or unreadable).
 */
function prune(storage, now, maxAgeMs, maxEntries, report) {
  if (typeof storage.key !== 'function' || typeof storage.length !== 'number' || typeof storage.removeItem !== 'function') return 0;
  const ours = [];
  for (let i = 0; i < storage.length; i++) {
    const k = storage.key(i);
    if (typeof k === 'string' && k.startsWith(PREFIX)) ours.push(k);
  }
  const evictable = [];
  let pinned = 0;
  for (const k of ours) {
    let raw;
    try {
      raw = storage.getItem(k);
    } catch (error) {
      report(error);
      pinned++;
      continue;
    }
    const v = parsed(raw);
    if (!validEntry(v) || !current(v, now, maxAgeMs)) storage.removeItem(k);
    else if (OPEN.has(v.status)) pinned++;
    else evictable.push([v.createdAt, k]);
  }
  evictable.sort((a, b) => a[0] - b[0]);
  for (const [, k] of evictable.slice(0, Math.max(0, pinned + evictable.length - maxEntries))) storage.removeItem(k);
  return pinned;
}

/**
 * The idempotency key of one cart's checkout, persisted in `storage` (default localStorage: shared by
 * the origin's tabs and kept across reloads; sessionStorage keeps it per tab, across reloads only),
 * with the charge's state beside it. `navigator.locks` (Web Locks) makes "one charge at a time per
 * cart" hold across tabs and tells a live charge in another tab from one a reload interrupted.
 *
 * Stored entries are untrusted input: an entry that is not exactly the shape this function writes
 * (a valid key, a known status, a settled outcome that names the same key and status, a `createdAt`)
 * is ignored and replaced. An in-flight or unknown entry (its key may have been charged) is never
 * pruned — not for its age, a clock set back, or room — only settling it or `clear()` ends it; when
 * such entries alone fill `maxEntries`, a NEW cart rejects with StoreFullError. Settled entries older
 * than `maxAgeMs` (default 24 h, the gateway's key retention) from the key's first use, and `new`
 * ones from their creation, are pruned, and the oldest of those go first past `maxEntries` (default
 * 100). A read that throws is not "no entry": it is reported to `onStorageError(error)` and the call
 * (this one, `state()` or `charge()`) rejects with StateStoreUnavailableError, replacing nothing
 * and sending nothing. A storage that refuses to record the outcome after the request went out
 * (quota exceeded, SecurityError) is reported to `onStorageError(error)` and the charge still
 * resolves its real outcome; one that refuses before anything is sent rejects `charge()` with its error.
 *
 * Returns (a Promise of) `{ key, cartId, state(), charge(client, charge, { resume, signal }), clear() }`.
 */
export async function persistentCheckoutKey(options) {
  const where = 'persistentCheckoutKey';
  const opts = o.misspelt(o.object(options, where), ['cartId', 'storage', 'locks', 'maxAgeMs', 'maxEntries', 'onStorageError'], where);
  const cartId = o.own(opts, 'cartId');
  if (typeof cartId !== 'string' || cartId.length === 0 || cartId.length > 255) throw o.typeError(where, 'cartId', 'a string of 1 to 255 characters', cartId);
  const storage = o.own(opts, 'storage') ?? globalThis.localStorage;
  if (storage === null || typeof storage !== 'object' || typeof storage.getItem !== 'function' || typeof storage.setItem !== 'function') {
    throw o.typeError(where, 'storage', 'a Storage (localStorage, sessionStorage or { getItem, setItem, removeItem })', storage);
  }
  const ownLocks = o.own(opts, 'locks');
  const locks = ownLocks === undefined ? globalThis.navigator?.locks : ownLocks;
  const maxAgeMs = o.num(opts, 'maxAgeMs', where) ?? CHECKOUT_KEY_MAX_AGE_MS;
  if (!(maxAgeMs > 0)) throw o.rangeError(where, 'maxAgeMs', 'a number > 0', maxAgeMs);
  const onStorageError = o.fn(opts, 'onStorageError', where);
  const maxEntries = o.num(opts, 'maxEntries', where) ?? CHECKOUT_KEY_MAX_ENTRIES;
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) throw o.rangeError(where, 'maxEntries', 'an integer >= 1', maxEntries);
  const storageKey = `${PREFIX}${cartId}`;
  const lockName = `steadfast:checkout:${cartId}`;
  const report = (error) => {
    try {
      onStorageError?.(error);
    } catch {
      // a throwing listener must not change the outcome
    }
  };
  // This cart's entry, or undefined when there is none or it is malformed (then it is replaced). A
  // storage that throws on the read is NOT "no entry": the entry may hold a key that was sent, so it
  // is reported and the call rejects with StateStoreUnavailableError, replacing nothing.
  const read = () => {
    let raw;
    try {
      raw = storage.getItem(storageKey);
    } catch (error) {
      report(error);
      throw new StateStoreUnavailableError('read', `storage refused to read cart ${JSON.stringify(cartId)}'s entry (nothing replaced, nothing sent)`, error);
    }
    const v = parsed(raw);
    return validEntry(v) ? v : undefined;
  };
  // True while the page is being left (beforeunload fired) during one of this cart's charges. Firefox
  // and WebKit abort the page's fetches right after beforeunload and still run its JS, so a charge cut
  // short by a reload would record its own abort as 'unknown'; Chromium tears the page down first.
  // Keep the record 'in-flight' in every engine: the next load finds the lock free and reads it as
  // interrupted (unknown). A settled outcome is still written, and so is an in-flight one: where
  // the next request goes (`sendingTo`) must be on record before it is sent, also while leaving (a
  // page that goes on running after beforeunload still fails over, and a resume at the other
  // endpoint would charge twice).
  let leaving = false;
  const write = (record) => {
    if (leaving && !SETTLED.has(record.status) && record.status !== 'in-flight') return;
    storage.setItem(storageKey, JSON.stringify(record));
  };
  // After the request went out, storage that refuses a write (quota exceeded, SecurityError in a
  // locked-down frame) must not turn a charge's real outcome into a rejection: the write is
  // reported to onStorageError and the outcome stands (the gateway holds the key's truth).
  const keep = (record) => {
    try {
      write(record);
    } catch (error) {
      report(error);
    }
  };
  const exclusive = (name, lockOptions, fn) => (locks ? locks.request(name, lockOptions, fn) : fn({ name }));
  const charging = async () => {
    if (!locks) return read()?.status === 'in-flight'; // (after read(): it threw first if unreadable)
    const { held = [] } = await locks.query();
    return held.some((l) => l.name === lockName);
  };

  // Read or create the key under a lock, so two tabs opening the same cart agree on one key.
  // Entries that may have been sent (in flight, unknown) are never evicted to make room: when they
  // alone fill `maxEntries`, a NEW cart is refused (StoreFullError, reported) and the others stay.
  const record = await exclusive(`${lockName}:init`, {}, () => {
    const now = Date.now();
    const pinned = prune(storage, now, maxAgeMs, maxEntries, report);
    let r = read();
    if (r !== undefined && !current(r, now, maxAgeMs)) r = undefined; // (no removeItem: a stale one is replaced)
    if (r === undefined) {
      r = { key: newIdempotencyKey(), status: 'new', createdAt: now };
      if (pinned >= maxEntries) {
        const error = new StoreFullError(r.key, maxEntries);
        report(error);
        throw error;
      }
      write(r);
    }
    return r;
  });
  const key = record.key;
  const createdAt = record.createdAt;

  const state = async () => {
    const r = read() ?? { key, status: 'new', createdAt };
    if (r.key !== key) return { ...r, status: 'replaced' };
    // In flight but nobody holds the lock: the page that was charging went away mid-charge (reload,
    // crash, closed tab). Money may have moved: that is unknown, not "try again".
    if (r.status === 'in-flight' && !(await charging())) return { ...r, status: 'unknown', interrupted: true };
    return r;
  };

  return {
    key,
    cartId,
    state,
    /**
     * Charge once for this cart with `client` (createCheckoutClient). Answers without calling the
     * gateway when another tab is charging (`{ status: 'in-flight' }`), when the cart is already
     * settled (its stored outcome), or when a previous charge ended unknown or was interrupted
     * (`{ status: 'unknown' }`) — unless `resume: true`, which re-sends the SAME key: safe against
     * a gateway that honours idempotency keys (it replays the first outcome or answers 409).
     */
    async charge(client, charge, chargeOptions) {
      if (client === null || typeof client !== 'object' || typeof client.charge !== 'function') {
        throw o.typeError('charge', 'client', 'a checkout client (createCheckoutClient)', client);
      }
      const co = o.misspelt(o.object(chargeOptions, 'charge', true), ['resume', 'signal'], 'charge');
      // The cart this key is bound to (a digest of the charge as the client sends it): a reload
      // with a changed cart must not resume, replay or settle under the key of the old one.
      const fp = fingerprintHex(typeof client.fingerprint === 'function' ? client.fingerprint(charge) : canonicalCharge(o.object(charge, 'charge')));
      const run = async (lock) => {
        if (lock === null) return { status: 'in-flight', key };
        // The entry may be gone (another tab's prune, a stale 'new' one): this run still holds its
        // key and createdAt, and every write below carries them, so a record is never keyless.
        const r = read() ?? { key, status: 'new', createdAt };
        if (r.key !== key) return { status: 'replaced', key };
        if (r.status !== 'new' && r.fp !== undefined && r.fp !== fp) throw new IdempotencyKeyReuseError(key);
        if (SETTLED.has(r.status)) return { ...r.outcome, status: r.status, key, replayed: true };
        const resumed = OPEN.has(r.status);
        if (resumed && o.own(co, 'resume') !== true) return { status: 'unknown', key };
        const now = Date.now();
        const firstUsedAt = isTime(r.firstUsedAt) ? r.firstUsedAt : isTime(r.startedAt) ? r.startedAt : now;
        // Where a resumed charge may have been processed: the endpoint its unknown outcome named,
        // else the one its last request was going to (undefined: the primary). A new one was sent nowhere.
        const where = !resumed
          ? undefined
          : ((r.status === 'unknown' && typeof r.endpoint === 'string' ? r.endpoint : undefined) ??
            (typeof r.sendingTo === 'string' ? r.sendingTo : undefined));
        const sent = {
          ...r,
          key,
          createdAt,
          fp,
          status: 'in-flight',
          startedAt: now,
          firstUsedAt,
          amountCents: charge?.amountCents,
          currency: charge?.currency,
          sendingTo: where,
        };
        write(sent);
        // A resumed key may have been processed (the stored state says so): the client starts its
        // history there, so only a success, or a decline after the settle window from the last
        // attempt the entry knows of, settles it. An interrupted charge's last attempt is not known.
        // Before each request goes out, the entry records where it goes (`sendingTo`): a charge
        // interrupted there (the page closed mid-request) is resumed at that endpoint only, never
        // at the other one, which would charge it a second time. The first endpoint of a run is
        // where a resume would go anyway (the primary, or where it may have been processed): a
        // write that fails then is reported and the request goes out. Another one (a failover) is
        // sent only once it is recorded: a write that fails stops it before it is sent.
        const chargeOptions = {
          idempotencyKey: key,
          signal: o.own(co, 'signal'),
          [SENDING]: (url) => {
            if (sent.sendingTo === url) return;
            const first = sent.sendingTo === undefined;
            sent.sendingTo = url;
            try {
              write(sent);
            } catch (error) {
              if (!first) throw error;
              report(error);
            }
          },
        };
        if (resumed) {
          chargeOptions.maybeProcessed = { firstUsedAt };
          if (r.status === 'unknown' && isTime(r.lastAttemptAt)) chargeOptions.maybeProcessed.lastAttemptAt = r.lastAttemptAt;
          if (where !== undefined) chargeOptions.maybeProcessed.endpoint = where;
        }
        // An unknown outcome keeps when its last attempt was (at most now) and where it may have been processed.
        const unknownFacts = async () => {
          let endpoint;
          try {
            const rec = await client.store?.peek?.(key);
            if (typeof rec?.endpoint === 'string') endpoint = rec.endpoint;
          } catch {
            // a store that cannot answer: the endpoint this run last sent to stands in
          }
          return { lastAttemptAt: Date.now(), endpoint: endpoint ?? sent.sendingTo ?? where };
        };
        let outcome;
        try {
          outcome = await client.charge(charge, chargeOptions);
        } catch (error) {
          // Nothing was sent (open circuit, bad request): the key is free again, unless it may have
          // been processed before (resumed): then it stays unknown. Anything else: unknown.
          const nothingSent = !resumed && (error?.code === 'CIRCUIT_OPEN' || error?.code === 'INVALID_OPTION' || error?.code === 'CHECKOUT_REJECTED');
          keep(nothingSent ? { ...sent, status: 'new' } : { ...sent, status: 'unknown', ...(await unknownFacts()) });
          throw error;
        }
        // 'unavailable': provably nothing was sent, so the cart's key is as new (its outcome is kept);
        // not for a resumed key, which may have been processed before.
        const status = outcome.status === 'unavailable' ? (resumed ? 'unknown' : 'new') : outcome.status;
        const facts = status === 'unknown' ? await unknownFacts() : {};
        keep({ ...sent, ...facts, status, outcome, settledAt: Date.now() });
        return outcome;
      };
      const onLeave = () => {
        leaving = true;
      };
      globalThis.addEventListener?.('beforeunload', onLeave);
      try {
        return await exclusive(lockName, { ifAvailable: true }, run);
      } finally {
        globalThis.removeEventListener?.('beforeunload', onLeave);
        leaving = false;
      }
    },
    /** Forget this cart's key (after a success, or to try another card after a decline). */
    clear() {
      storage.removeItem?.(storageKey);
    },
  };
}
