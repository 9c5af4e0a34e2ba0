// A faulty payment gateway on 127.0.0.1, one listening port per fault, for record.mjs. Every fault
// answers any path and method the same way, so each client library's own URL layout works unchanged.
// Stripe's, Adyen's and Braintree's error bodies are merged into one JSON body so that each SDK finds
// the fields it parses. Adyen's SDK speaks HTTPS only: an HTTPS twin of every fault serves it.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

/** The faults, in the order the matrix lists them. `refused` and `dns` need no server. */
export const FAULTS = ['refused', 'dns', 'reset', 'hangup', 'timeout', '500', '502', '503', '504', '429', '402', '409', 'truncated'];

const BODIES = {
  500: { type: 'api_error', message: 'Internal error' },
  502: { type: 'api_error', message: 'Bad gateway' },
  503: { type: 'api_error', message: 'Service unavailable' },
  504: { type: 'api_error', message: 'Gateway timeout' },
  429: { type: 'rate_limit_error', message: 'Too many requests' },
  402: { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' },
  409: { type: 'idempotency_error', message: 'A request with this key is in progress.' },
};

function body(status) {
  const e = BODIES[status];
  // Stripe reads `error`; Adyen reads `status`, `errorCode`, `message`, `errorType`.
  return JSON.stringify({ error: e, status, errorCode: e.code ?? String(status), message: e.message, errorType: e.type });
}

/** What the server does once it has read the whole request. */
function behave(fault, req, res, held) {
  const socket = req.socket;
  switch (fault) {
    case 'reset':
      // An RST after the request arrived: it may have been processed. A TLS socket cannot be reset
      // from Node (resetAndDestroy needs a TCP handle): there it is closed as `hangup` is.
      if (socket.encrypted) socket.destroy();
      else socket.resetAndDestroy();
      return;
    case 'hangup':
      socket.destroy(); // a FIN, no answer
      return;
    case 'timeout':
      held.add(socket); // never answers; closed when the server stops
      return;
    case 'truncated': {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
      res.write('{"id":"ch_1","object":"charge","status":"succ');
      setTimeout(() => socket.destroy(), 20);
      return;
    }
    default: {
      const status = Number(fault);
      const headers = { 'content-type': 'application/json', 'request-id': 'req_local' };
      if (status === 429) headers['retry-after'] = '1';
      res.writeHead(status, headers);
      res.end(body(status));
    }
  }
}

function serve(fault, tls) {
  const held = new Set();
  const handler = (req, res) => {
    req.resume();
    req.on('end', () => behave(fault, req, res, held));
  };
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  server.keepAliveTimeout = 1;
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const close = () => {
        for (const s of held) s.destroy();
        server.closeAllConnections?.();
        return new Promise((r) => server.close(() => r()));
      };
      resolve({ port: server.address().port, close });
    });
  });
}

/** A port nothing listens on: bound, then released. */
function closedPort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Start every fault's server (and, with `tls` = { key, cert }, its HTTPS twin). Returns
 * { ports: { fault: port }, tlsPorts, close() }. `dns` has no port: its host is DNS_HOST.
 */
export async function startFaults(tls) {
  const ports = {};
  const tlsPorts = {};
  const closers = [];
  for (const fault of FAULTS) {
    if (fault === 'refused') {
      ports.refused = tlsPorts.refused = await closedPort();
      continue;
    }
    if (fault === 'dns') continue;
    const plain = await serve(fault, undefined);
    ports[fault] = plain.port;
    closers.push(plain.close);
    if (tls) {
      const secure = await serve(fault, tls);
      tlsPorts[fault] = secure.port;
      closers.push(secure.close);
    }
  }
  return { ports, tlsPorts, close: () => Promise.all(closers.map((c) => c())) };
}

/** The host of the `dns` fault: a reserved name (RFC 6761) that record.mjs's lookup refuses. */
export const DNS_HOST = 'steadfast-test.invalid';
