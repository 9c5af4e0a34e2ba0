// What a shared breaker counts, for any state store: the same outcome rules as CircuitBreaker
// (isExcluded, a refusal that never ran the call, slowCallDurationMs), asserted through the public
// driver over a real store. shared-memory.test.mjs runs it on the memory store, shared-redis.test.mjs
// on a real redis-server.
import assert from 'node:assert/strict';
import { CircuitBreaker, CircuitOpenError, createSharedBreaker, isSteadfastError } from 'steadfast';

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const decline = () => Object.assign(new Error('card declined'), { decline: true });
const isExcluded = (e) => e?.decline === true;
const fail = () => Promise.reject(new Error('HTTP 503'));

/** `[name, async (store, name) => void]` cases; `name` is unique per case so stores may be shared. */
export const OUTCOME_CASES = [
  [
    'excluded errors count as neither success nor failure',
    async (store, name) => {
      const b = createSharedBreaker({ store, name, failureThreshold: 2, openDurationMs: 60_000, isExcluded });
      await assert.rejects(b.execute(fail), /503/);
      for (let i = 0; i < 10; i++)
        await assert.rejects(
          b.execute(() => Promise.reject(decline())),
          /declined/,
        );
      assert.equal(await b.state(), 'closed', 'declines between two failures neither trip nor reset the run');
      await assert.rejects(b.execute(fail), /503/);
      assert.equal(await b.state(), 'open');
    },
  ],
  [
    'a refusal that never ran the call is excluded without isExcluded',
    async (store, name) => {
      const b = createSharedBreaker({ store, name, failureThreshold: 1, openDurationMs: 60_000 });
      const inner = new CircuitBreaker({ failureThreshold: 1, openDurationMs: 60_000 });
      await assert.rejects(inner.execute(fail), /503/);
      for (let i = 0; i < 5; i++)
        await assert.rejects(
          b.execute(() => inner.execute(() => 'never')),
          CircuitOpenError,
        );
      assert.equal(await b.state(), 'closed', "an open inner breaker says nothing about this breaker's dependency");
    },
  ],
  [
    'an excluded half-open probe gives its slot back: the next call probes at once',
    async (store, name) => {
      const b = createSharedBreaker({ store, name, failureThreshold: 1, openDurationMs: 50, isExcluded, localCacheMs: 0 });
      await assert.rejects(b.execute(fail), /503/);
      await sleep(80);
      let ran = 0;
      await assert.rejects(
        b.execute(() => {
          ran += 1;
          return Promise.reject(decline());
        }),
        /declined/,
      );
      // Without the slot back this call would be refused until the probe's lease lapsed (100 ms).
      assert.equal(await b.execute(() => (ran += 1)), 2);
      assert.equal(await b.state(), 'closed');
    },
  ],
  [
    'a success as slow as slowCallDurationMs counts as a failure',
    async (store, name) => {
      const b = createSharedBreaker({ store, name, failureThreshold: 2, openDurationMs: 60_000, slowCallDurationMs: 30 });
      const slow = () => sleep(45).then(() => 'late');
      assert.equal(await b.execute(() => 'fast'), 'fast');
      assert.equal(await b.execute(slow), 'late', 'the caller still gets the value');
      assert.equal(await b.state(), 'closed');
      assert.equal(await b.execute(slow), 'late');
      assert.equal(await b.state(), 'open', 'two slow calls in a row trip a failureThreshold of 2');
      await assert.rejects(
        b.execute(() => 'x'),
        CircuitOpenError,
      );
    },
  ],
  [
    'bad outcome options are typed errors naming the option',
    async (store, name) => {
      const base = { store, name, failureThreshold: 1, openDurationMs: 1000 };
      for (const [options, Type, option] of [
        [{ isExcluded: 'yes' }, TypeError, 'isExcluded'],
        [{ slowCallDurationMs: '5' }, TypeError, 'slowCallDurationMs'],
        [{ slowCallDurationMs: 0 }, RangeError, 'slowCallDurationMs'],
        [{ slowCallDurationMs: -1 }, RangeError, 'slowCallDurationMs'],
      ]) {
        assert.throws(
          () => createSharedBreaker({ ...base, ...options }),
          (e) => e instanceof Type && isSteadfastError(e, 'INVALID_OPTION') && e.message.includes(option),
          JSON.stringify(options),
        );
      }
    },
  ],
];
