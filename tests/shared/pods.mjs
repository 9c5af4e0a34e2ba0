// The parent side of tests/shared/worker.mjs: fork N pods, call their commands, kill them by pid.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('./worker.mjs', import.meta.url));

export async function startPod({ adapter, port, prefix }) {
  const child = fork(WORKER, [], {
    env: { ...process.env, STEADFAST_ADAPTER: adapter, STEADFAST_REDIS_PORT: String(port), STEADFAST_PREFIX: prefix },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let seq = 0;
  const pending = new Map();
  const listeners = [];
  let exited = false;
  const exit = new Promise((ok) => child.once('exit', (code, signal) => ok((exited = { code, signal }))));
  child.on('message', (m) => {
    if (m.event) {
      for (const l of listeners) l(m);
      return;
    }
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error) p?.reject(Object.assign(new Error(m.error.message), m.error));
    else p?.resolve(m.result);
  });
  const ready = new Promise((ok, fail) => {
    listeners.push((m) => m.event === 'ready' && ok());
    exit.then(() => fail(new Error('pod exited before ready')));
  });
  await ready;
  return {
    pid: child.pid,
    call(cmd, args) {
      const id = ++seq;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ id, cmd, args });
        exit.then(() => reject(new Error(`pod ${child.pid} exited during ${cmd}`)));
      });
    },
    /** Resolves with the first event message matching `pred`. */
    once(pred) {
      return new Promise((ok) => listeners.push((m) => pred(m) && ok(m)));
    },
    kill(signal = 'SIGKILL') {
      if (!exited) process.kill(child.pid, signal);
      return exit;
    },
    stop() {
      if (!exited) child.kill('SIGTERM');
      return exit;
    },
  };
}

export const startPods = (n, opts) => Promise.all(Array.from({ length: n }, () => startPod(opts)));
