// A manual clock for tests: `clock()` reads the time, `clock.advance(ms)` moves it on,
// `clock.set(ms)` puts it anywhere. Pass it as a `clock` option; nothing here reads real time.

/** @param {number} start the first reading, in ms */
export function manualClock(start) {
  let now = start;
  const clock = () => now;
  clock.advance = (ms) => {
    now += ms;
  };
  clock.set = (ms) => {
    now = ms;
  };
  return clock;
}
