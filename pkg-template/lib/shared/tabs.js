// Why: in a browser, "many processes" means many tabs of one origin and the same tab after a reload.
// A breaker that tripped in one tab should fail fast in all of them, and a checkout whose charge was
// in flight when the page reloaded (or that a second tab opens) must reuse its idempotency key and
// show "in flight / checking" instead of charging again.

import { CircuitBreaker } from '../breaker.js';
import { newIdempotencyKey } from '../idempotency.js';
import * as o from '../options.js';

/**
 * Share `breaker`'s trips across tabs through a BroadcastChannel. Wire the returned
 * `onStateChange` into the breaker's own option (it is only called after construction):
 *
 *   const breaker = new CircuitBreaker({ ...options, onStateChange: (s) => tabs.onStateChange(s) });
 *   const tabs = shareBreakerAcrossTabs(breaker, { channel: 'payments' });
 *
 * A trip ('open') is broadcast with its deadline (toJSON().openUntil, Date.now-based: same machine,
 * same clock); peers call openUntil(deadline). A close (a probe succeeded) resets open peers. A tab
 * that opens later asks ('hello') and an open peer answers with its deadline.
 */
export function shareBreakerAcrossTabs(breaker, options) {
  const where = 'shareBreakerAcrossTabs';
  if (!(breaker instanceof CircuitBreaker)) throw o.typeError(where, 'breaker', 'a CircuitBreaker', breaker);
  const opts = o.object(options, where, true);
  const name = opts.channel ?? 'steadfast:breaker';
  if (typeof name !== 'string' || name.length === 0) throw o.typeError(where, 'channel', 'a non-empty string', name);
  const Channel = opts.BroadcastChannel ?? globalThis.BroadcastChannel;
  if (typeof Channel !== 'function') throw o.typeError(where, 'BroadcastChannel', 'a BroadcastChannel constructor (none in this environment)', Channel);
  const onRemote = o.fn(opts, 'onRemote', where);
  const channel = new Channel(name);
  let applying = false;
  let closed = false;
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
  channel.onmessage = (event) => {
    const m = event.data;
    if (m === null || typeof m !== 'object') return;
    if (m.type === 'open' && typeof m.until === 'number') {
      apply(() => breaker.openUntil(m.until));
      onRemote?.({ type: 'open', until: m.until });
    } else if (m.type === 'closed') {
      if (!breaker.isolated && breaker.currentState !== 'closed') apply(() => breaker.reset());
      onRemote?.({ type: 'closed' });
    } else if (m.type === 'hello') {
      announceOpen();
    }
  };
  post({ type: 'hello' });
  return {
    channel: name,
    /** Call from the breaker's onStateChange: broadcasts this tab's own transitions. */
    onStateChange(state) {
      if (applying) return;
      if (state === 'open') announceOpen();
      else if (state === 'closed') post({ type: 'closed' });
    },
    /** Stop sharing (the breaker keeps working alone). */
    close() {
      closed = true;
      channel.close();
    },
  };
}

const SETTLED = new Set(['succeeded', 'declined']);

/**
 * The idempotency key of one cart's checkout, persisted in `storage` (default localStorage: shared by
 * the origin's tabs and kept across reloads; sessionStorage keeps it per tab, across reloads only),
 * with the charge's state beside it. `navigator.locks` (Web Locks) makes "one charge at a time per
 * cart" hold across tabs and tells a live charge in another tab from one a reload interrupted.
 *
 * Returns (a Promise of) `{ key, cartId, state(), charge(client, charge, { resume, signal }), clear() }`.
 */
export async function persistentCheckoutKey(options) {
  const where = 'persistentCheckoutKey';
  const opts = o.object(options, where);
  const cartId = opts.cartId;
  if (typeof cartId !== 'string' || cartId.length === 0) throw o.typeError(where, 'cartId', 'a non-empty string', cartId);
  const storage = opts.storage ?? globalThis.localStorage;
  if (storage === null || typeof storage !== 'object' || typeof storage.getItem !== 'function' || typeof storage.setItem !== 'function') {
    throw o.typeError(where, 'storage', 'a Storage (localStorage, sessionStorage or { getItem, setItem, removeItem })', storage);
  }
  const locks = opts.locks === undefined ? globalThis.navigator?.locks : opts.locks;
  const storageKey = `steadfast:checkout:${cartId}`;
  const lockName = `steadfast:checkout:${cartId}`;
  const read = () => {
    try {
      const v = JSON.parse(storage.getItem(storageKey) ?? 'null');
      return v !== null && typeof v === 'object' && typeof v.key === 'string' ? v : undefined;
    } catch {
      return undefined;
    }
  };
  // True while the page is being left (beforeunload fired) during one of this cart's charges. Firefox
  // and WebKit abort the page's fetches right after beforeunload and still run its JS, so a charge cut
  // short by a reload would record its own abort as 'unknown'; Chromium tears the page down first.
  // Keep the record 'in-flight' in every engine: the next load finds the lock free and reads it as
  // interrupted (unknown). A settled outcome is still written.
  let leaving = false;
  const write = (record) => {
    if (leaving && !SETTLED.has(record.status)) return;
    storage.setItem(storageKey, JSON.stringify(record));
  };
  const exclusive = (name, lockOptions, fn) => (locks ? locks.request(name, lockOptions, fn) : fn({ name }));
  const charging = async () => {
    if (!locks) return read()?.status === 'in-flight';
    const { held = [] } = await locks.query();
    return held.some((l) => l.name === lockName);
  };

  // Read or create the key under a lock, so two tabs opening the same cart agree on one key.
  const record = await exclusive(`${lockName}:init`, {}, () => {
    let r = read();
    if (r === undefined) {
      r = { key: newIdempotencyKey(), status: 'new', createdAt: Date.now() };
      write(r);
    }
    return r;
  });
  const key = record.key;

  const state = async () => {
    const r = read() ?? { key, status: 'new' };
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
      const co = o.object(chargeOptions, 'charge', true);
      const run = async (lock) => {
        if (lock === null) return { status: 'in-flight', key };
        const r = read() ?? { key, status: 'new' };
        if (r.key !== key) return { status: 'replaced', key };
        if (SETTLED.has(r.status)) return { ...r.outcome, status: r.status, key, replayed: true };
        if ((r.status === 'in-flight' || r.status === 'unknown') && co.resume !== true) return { status: 'unknown', key };
        write({ ...r, status: 'in-flight', startedAt: Date.now(), amountCents: charge?.amountCents, currency: charge?.currency });
        let outcome;
        try {
          outcome = await client.charge(charge, { idempotencyKey: key, signal: co.signal });
        } catch (error) {
          // Nothing was sent (open circuit, bad request): the key is free again. Anything else: unknown.
          const nothingSent = error?.code === 'CIRCUIT_OPEN' || error?.code === 'INVALID_OPTION' || error?.code === 'CHECKOUT_REJECTED';
          write({ ...read(), status: nothingSent ? 'new' : 'unknown' });
          throw error;
        }
        // 'unavailable': provably nothing was sent, so the cart's key is as new (its outcome is kept).
        write({ ...read(), status: outcome.status === 'unavailable' ? 'new' : outcome.status, outcome, settledAt: Date.now() });
        return outcome;
      };
      const onLeave = () => { leaving = true; };
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
