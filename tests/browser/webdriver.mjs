// A small W3C WebDriver client over fetch, for the engines Playwright cannot drive here: Gecko
// (geckodriver + Debian's firefox-esr, headless) and WebKit (WebKitWebDriver + WebKitGTK's MiniBrowser
// under `xvfb-run -a`). Not a test itself. It covers what the suites use — sessions, navigation,
// execute (promises awaited, per the spec), element find/click/type, screenshots, windows/tabs — and
// exposes a Playwright-shaped `page` (goto, evaluate, waitForFunction, waitForSelector, click, fill,
// textContent, getAttribute, reload, screenshot, close) so one test body drives all three engines.
//
// Why not a client from npm: webdriverio/selenium-webdriver pull in dozens of packages and their own
// driver download/management logic; the protocol subset needed is ~15 endpoints.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';

const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf';

/** Where each engine's pieces live on this project's machines (Debian 12); overridable by env. */
export const WEBDRIVER_ENGINES = {
  firefox: {
    label: 'Firefox',
    driver: () => process.env.STEADFAST_GECKODRIVER || 'geckodriver',
    driverArgs: (port) => ['--host', '127.0.0.1', '--port', String(port), '--log', 'error'],
    capabilities: () => ({
      browserName: 'firefox',
      'moz:firefoxOptions': {
        binary: process.env.STEADFAST_FIREFOX || '/usr/bin/firefox-esr',
        args: ['-headless'],
        // Each session gets geckodriver's fresh temporary profile; keep Firefox from phoning home.
        prefs: { 'app.update.enabled': false, 'browser.shell.checkDefaultBrowser': false, 'datareporting.policy.dataSubmissionEnabled': false },
      },
    }),
    display: false,
  },
  webkit: {
    label: 'WebKit',
    driver: () => process.env.STEADFAST_WEBKITDRIVER || '/usr/bin/WebKitWebDriver',
    driverArgs: (port) => [`--host=127.0.0.1`, `--port=${port}`],
    capabilities: () => ({
      'webkitgtk:browserOptions': {
        binary: process.env.STEADFAST_MINIBROWSER || '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser',
        args: ['--automation'],
      },
    }),
    // MiniBrowser has no headless mode: the driver (and so the browser it starts) runs under Xvfb.
    display: true,
  },
};

async function freePort() {
  const srv = createServer();
  await new Promise((ok, fail) => srv.once('error', fail).listen(0, '127.0.0.1', ok));
  const { port } = srv.address();
  await new Promise((ok) => srv.close(ok));
  return port;
}

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/** A WebDriver error with the driver's `error` code and message. */
export class WebDriverError extends Error {
  constructor(command, status, value) {
    super(`${command}: ${value?.error ?? `HTTP ${status}`}: ${value?.message ?? JSON.stringify(value)}`);
    this.name = 'WebDriverError';
    this.code = value?.error ?? `http_${status}`;
  }
}

/**
 * Starts the engine's driver on a free loopback port (under `xvfb-run -a` for WebKit) and waits for
 * /status. Returns { url, log, stop() }; stop() ends the process group it started, by its id.
 */
export async function startDriver(engine) {
  const spec = WEBDRIVER_ENGINES[engine];
  if (!spec) throw new Error(`unknown WebDriver engine ${engine}`);
  const bin = spec.driver();
  if (bin.includes('/') && !existsSync(bin)) throw new Error(`${spec.label}: ${bin} not found; run 'make setup'`);
  let lastError;
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    const port = await freePort();
    const [cmd, args] = spec.display ? ['xvfb-run', ['-a', bin, ...spec.driverArgs(port)]] : [bin, spec.driverArgs(port)];
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let log = '';
    const keep = (chunk) => {
      log = (log + chunk.toString()).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let exited = false;
    // The driver runs in its own process group (so that stop() ends the browser and Xvfb with it);
    // if this process exits without stop() — a crash, an uncaught error — end that group too.
    const reap = () => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    };
    process.once('exit', reap);
    child.once('exit', () => {
      exited = true;
      process.removeListener('exit', reap);
    });
    child.once('error', (e) => {
      exited = true;
      keep(String(e));
    });
    const url = `http://127.0.0.1:${port}`;
    const t0 = Date.now();
    while (!exited && Date.now() - t0 < 20_000) {
      try {
        const r = await fetch(`${url}/status`, { signal: AbortSignal.timeout(2_000) });
        if (r.ok) {
          return {
            url,
            get log() {
              return log;
            },
            async stop() {
              if (exited) return;
              const gone = new Promise((ok) => child.once('exit', ok));
              try {
                process.kill(-child.pid, 'SIGTERM');
              } catch {
                return;
              }
              await Promise.race([gone, sleep(5_000)]);
              if (!exited) {
                try {
                  process.kill(-child.pid, 'SIGKILL');
                } catch {
                  /* gone */
                }
              }
            },
          };
        }
      } catch (e) {
        lastError = e;
      }
      await sleep(100);
    }
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
    lastError = new Error(`${spec.label} driver ${bin} did not answer on port ${port} (attempt ${attempt}): ${log.trim().slice(-2000)}`);
  }
  throw lastError;
}

/** One WebDriver session: raw commands, serialized (a session runs one command at a time). */
export class Session {
  constructor(driverUrl, id, capabilities) {
    this.driverUrl = driverUrl;
    this.id = id;
    this.capabilities = capabilities;
    this.queue = Promise.resolve();
    this.current = null; // the window handle commands currently go to
  }

  static async create(driverUrl, alwaysMatch) {
    const value = await command(driverUrl, 'POST', '/session', { capabilities: { alwaysMatch } }, 90_000);
    const s = new Session(driverUrl, value.sessionId, value.capabilities);
    s.current = await s.cmd('GET', '/window');
    return s;
  }

  /** A raw command on this session (path relative to /session/<id>). */
  cmd(method, path, body, timeoutMs = 60_000) {
    return command(this.driverUrl, method, `/session/${this.id}${path}`, body, timeoutMs);
  }

  /** Runs `fn` after every call queued before it (a session runs one command at a time). */
  serial(fn) {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => {});
    return run;
  }

  /** Runs `fn` with the session switched to window `handle`, serialized with every other call. */
  inWindow(handle, fn) {
    return this.serial(async () => {
      if (this.current !== handle) {
        await this.cmd('POST', '/window', { handle });
        this.current = handle;
      }
      return fn();
    });
  }

  async delete() {
    await command(this.driverUrl, 'DELETE', `/session/${this.id}`, undefined, 30_000).catch(() => {});
  }
}

async function command(base, method, path, body, timeoutMs) {
  let res;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    throw new Error(`${method} ${path}: no answer from the driver: ${e.message}`);
  }
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = { value: { error: 'invalid json', message: text.slice(0, 500) } };
  }
  if (!res.ok || (json.value && typeof json.value === 'object' && 'error' in json.value && json.value.error)) {
    throw new WebDriverError(`${method} ${path}`, res.status, json.value);
  }
  return json.value;
}

// Collects what a WebDriver engine cannot report through the protocol: uncaught errors, unhandled
// rejections and console.error/warn calls of the page, into globalThis.__wdProblems. Installed after
// each navigation, so errors raised while the page loads are caught by the suites' readiness checks
// (a page that failed to load never sets its ready flag) rather than here.
const INSTALL_PROBLEMS = `
  if (!window.__wdProblems) {
    const p = (window.__wdProblems = []);
    addEventListener('error', (e) => p.push('pageerror: ' + (e.message || e.error)));
    addEventListener('unhandledrejection', (e) => p.push('pageerror: ' + (e.reason && e.reason.message || e.reason)));
    for (const level of ['error', 'warn']) {
      const orig = console[level].bind(console);
      console[level] = (...a) => { p.push('console.' + (level === 'warn' ? 'warning' : 'error') + ': ' + a.map(String).join(' ')); orig(...a); };
    }
  }`;

/** A Playwright-shaped page over one window of a WebDriver session. */
export class WebDriverPage {
  constructor(browser, handle) {
    this.browser = browser;
    this.session = browser.session;
    this.handle = handle;
    this.closed = false;
  }

  _in(fn) {
    return this.session.inWindow(this.handle, fn);
  }

  async _collectProblems() {
    const found = await this.session
      .cmd('POST', '/execute/sync', { script: 'const p = window.__wdProblems || []; return Array.from(p.splice(0, p.length), String);', args: [] })
      .catch(() => []);
    this.browser.problems.push(...(found ?? []));
  }

  async _afterNavigation() {
    await this._inject(INSTALL_PROBLEMS);
  }

  // Runs classic-script `code` in the page's own realm, through an inline <script> element. Execute
  // Script is not enough to change the page: geckodriver runs it in a sandbox whose global falls back
  // to the window for reads but keeps its own writes (a global assigned there is invisible to the page).
  async _inject(code) {
    await this.session.cmd('POST', '/execute/sync', {
      script: 'const s = document.createElement("script"); s.textContent = arguments[0]; (document.head || document.documentElement).append(s); s.remove();',
      args: [code],
    });
  }

  /** Runs classic-script source `code` in the page's realm (e.g. to wrap the page's fetch). */
  addScript(code) {
    return this._in(() => this._inject(code));
  }

  goto(url) {
    return this._in(async () => {
      await this._collectProblems();
      await this.session.cmd('POST', '/url', { url }, 60_000);
      await this._afterNavigation();
    });
  }

  reload() {
    return this._in(async () => {
      await this._collectProblems();
      await this.session.cmd('POST', '/refresh', {}, 60_000);
      await this._afterNavigation();
    });
  }

  /** Runs `fn(arg)` in the page (a function, serialized like Playwright does); promises are awaited. */
  evaluate(fn, arg) {
    const script = typeof fn === 'function' ? `return (${fn}).apply(null, arguments);` : `return (${fn});`;
    return this._in(async () => {
      const value = await this.session.cmd('POST', '/execute/sync', { script, args: arg === undefined ? [] : [arg] }, 60_000);
      await this._collectProblems();
      return value;
    });
  }

  /** Polls `fn(arg)` until it returns a truthy value (returned); fails after `timeout` ms. */
  async waitForFunction(fn, arg, { timeout = 30_000, polling = 100 } = {}) {
    const t0 = Date.now();
    for (;;) {
      const value = await this.evaluate(fn, arg);
      if (value) return value;
      if (Date.now() - t0 > timeout) throw new Error(`waitForFunction timed out after ${timeout} ms: ${fn}`);
      await sleep(polling);
    }
  }

  /** Waits until `selector` matches an element (attached; visibility is not checked). */
  async waitForSelector(selector, { timeout = 30_000 } = {}) {
    await this.waitForFunction((s) => document.querySelector(s) !== null, selector, { timeout });
  }

  async _element(selector) {
    const v = await this.session.cmd('POST', '/element', { using: 'css selector', value: selector });
    return v[ELEMENT];
  }

  /** A real WebDriver element click (scrolls into view, checks it is interactable). */
  click(selector) {
    return this._in(async () => {
      const el = await this._element(selector);
      await this.session.cmd('POST', `/element/${el}/click`, {});
    });
  }

  /** Clears the input and types `value` into it. */
  fill(selector, value) {
    return this._in(async () => {
      const el = await this._element(selector);
      await this.session.cmd('POST', `/element/${el}/clear`, {});
      await this.session.cmd('POST', `/element/${el}/value`, { text: String(value) });
    });
  }

  textContent(selector) {
    return this.evaluate((s) => document.querySelector(s)?.textContent ?? null, selector);
  }

  getAttribute(selector, name) {
    return this.evaluate(([s, n]) => document.querySelector(s)?.getAttribute(n) ?? null, [selector, name]);
  }

  /** Viewport screenshot as PNG (WebDriver has no full-page screenshot; `fullPage` is ignored). */
  screenshot({ path } = {}) {
    return this._in(async () => {
      const b64 = await this.session.cmd('GET', '/screenshot');
      const png = Buffer.from(b64, 'base64');
      if (path) await writeFile(path, png);
      return png;
    });
  }

  close() {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    return this._in(async () => {
      await this._collectProblems();
      const left = await this.session.cmd('DELETE', '/window');
      this.session.current = null;
      if (Array.isArray(left) && left.length > 0) {
        await this.session.cmd('POST', '/window', { handle: left[0] });
        this.session.current = left[0];
      }
    });
  }
}

/**
 * Launches `engine` ('firefox' | 'webkit'): driver + one session. Returns an object shaped like
 * harness.launchBrowser()'s: { engine, label, version, page, problems, newPage(), close() }.
 */
export async function launchWebDriver(engine) {
  const spec = WEBDRIVER_ENGINES[engine];
  const driver = await startDriver(engine);
  let session;
  try {
    session = await Session.create(driver.url, spec.capabilities());
    await session.cmd('POST', '/timeouts', { script: 60_000, pageLoad: 60_000, implicit: 0 });
  } catch (e) {
    const log = driver.log.trim().slice(-3000);
    await driver.stop();
    throw new Error(`${spec.label} did not start: ${e.message}${log ? `\n--- driver log ---\n${log}` : ''}`);
  }
  const caps = session.capabilities ?? {};
  const browser = {
    engine,
    label: spec.label,
    version: String(caps.browserVersion ?? '?'),
    session,
    problems: [],
    page: null,
    /** A new tab in the same session (same profile: storage and BroadcastChannel are shared). */
    async newPage() {
      const { handle } = await session.serial(() => session.cmd('POST', '/window/new', { type: 'tab' }));
      return new WebDriverPage(browser, handle);
    },
    get driverLog() {
      return driver.log;
    },
    async close() {
      await session.delete();
      await driver.stop();
    },
  };
  browser.page = new WebDriverPage(browser, session.current);
  browser.userAgent = await browser.page.evaluate(() => navigator.userAgent);
  return browser;
}
