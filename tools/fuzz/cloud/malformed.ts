// Raw bytes that are not (quite) HTTP/1.1: bad request lines and targets, headers past the cloud's
// limits (cloud/limits.ts), bad framing, bodies cut short by FIN or a reset.
import { CLOUD_FUNCTIONS } from '../../../cloud/functions.ts';
import { HTTP_LIMITS } from '../../../cloud/limits.ts';
import { chunked, type RawStep } from '../raw-http.ts';
import { CANARY_TRACK, pathOf, type GenContext } from './context.ts';

export interface Malformed {
  bytes: RawStep[];
  label: string;
  method: string;
  mayNotAnswer: boolean;
  /** Requests in `bytes` (pipelined ones are answered in turn). */
  requests?: number;
}

export function malformed(ctx: GenContext): Malformed {
  const { rng } = ctx;
  const host = 'Host: 127.0.0.1\r\n';
  const backup = pathOf('devices', ctx.devices[0]!.uuid, 'backup');
  const kind = rng.int(0, 21);
  const one = (s: string | Buffer, label: string, method = 'GET'): Malformed => ({ bytes: [{ write: s }], label, method, mayNotAnswer: false });
  switch (kind) {
    case 0:
      if (rng.chance(0.1)) {
        // Empty lines before a request line are allowed (RFC 9112 2.2): the server waits for more; FIN ends it.
        return { bytes: [{ write: '\r\n\r\n\r\n', end: true }], label: 'empty lines, FIN', method: 'GET', mayNotAnswer: true };
      }
      return one(rng.pick(['GARBAGE\r\n\r\n', 'GET\r\n\r\n', 'GET /health\r\n\r\n', ' GET /health HTTP/1.1\r\n\r\n', 'GET /health HTTP/9.9\r\n' + host + '\r\n', 'GET /health HTTP/1.1 extra\r\n' + host + '\r\n']), 'bad request line');
    case 1:
      return one(Buffer.concat([rng.bytes(rng.int(1, 300)), Buffer.from('\r\n\r\n')]), 'binary garbage');
    case 2:
      return one(`GET ${rng.pick(['http://[/health', 'http://127.0.0.1/health', 'https://x.example/ota/a/0x00000000/a', 'http://user@host/health', 'http:///health', 'ftp://x/health', 'http://x', 'http://x?y', '*', 'health', '127.0.0.1:80'])} HTTP/1.1\r\n${host}\r\n`, 'absolute-form / odd target');
    case 3: {
      const limit = HTTP_LIMITS.maxHeaderBytes;
      return one(`GET /health HTTP/1.1\r\n${host}X-Big: ${'a'.repeat(rng.int(limit + 100, limit * 2.5))}\r\n\r\n`, `headers over ${limit / 1024} KB`);
    }
    case 4: {
      let h = '';
      const n = rng.int(HTTP_LIMITS.maxHeaderFields + 1, 1500);
      for (let i = 0; i < n; i++) h += `X-H${i}: v\r\n`;
      return one(`GET /health HTTP/1.1\r\n${host}${h}\r\n`, `${n} header fields`);
    }
    case 5:
      return one(`POST /admin/devices/x HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n${rng.pick(['zz', '-1', 'fffffffffffffffffff', '1;' + 'e'.repeat(20_000), '5\r\nab', ' 5'])}\r\n\r\n`, 'bad chunk size', 'POST');
    case 6: {
      const method = rng.pick(['POST', 'PATCH']);
      const path = method === 'POST' ? backup : pathOf('appconfig', CLOUD_FUNCTIONS[0]);
      const declared = rng.int(10, 5000);
      return { bytes: [{ write: `${method} ${path} HTTP/1.1\r\n${host}Content-Type: application/octet-stream\r\nContent-Length: ${declared}\r\n\r\n${'x'.repeat(rng.int(0, declared - 1))}`, end: true }], label: 'body cut short, FIN', method, mayNotAnswer: false };
    }
    case 7:
      return one(`GET /health HTTP/1.1\r\n${host}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, 'content-length and chunked');
    case 8:
      return one(`GET /health HTTP/1.1\r\n${host}Content-Length: ${rng.pick(['-1', 'abc', '1e3', '99999999999999999999', '1, 2'])}\r\n\r\n`, 'bad content-length');
    case 9:
      return one(`GET /health HTTP/1.1\r\n${host}${rng.pick(['Bad Header: x', 'X-A\u0000: y', ': empty name', 'X-Fold: a\r\n folded', 'NoColon', 'X-Ctl: a\u0001b'])}\r\n\r\n`, 'bad header line');
    case 10:
      return one('GET /health HTTP/1.1\r\n\r\n', 'no Host');
    case 11:
      return one(`CONNECT ${rng.pick(['127.0.0.1:80', '/health', 'x'])} HTTP/1.1\r\n${host}\r\n`, 'CONNECT', 'CONNECT');
    case 12:
      return one(`GET /health HTTP/1.1\r\n${host}Expect: ${rng.pick(['junk', '100-continue, junk', '101-switch'])}\r\n\r\n`, 'Expect');
    case 13:
      return one(`GET /health HTTP/1.1\r\n${host}Content-Length: 5\r\n\r\nhello`, 'GET with a body');
    case 14:
      return one(`GET /${'%'.repeat(rng.int(1, 5))}${rng.pick(['/../../etc/passwd', '\u00ff\u00fe', '%c0%af'])} HTTP/1.1\r\n${host}\r\n`, 'odd bytes in the path');
    case 15: {
      const ota = pathOf('ota', CANARY_TRACK.cls, CANARY_TRACK.productHex, CANARY_TRACK.application);
      return { bytes: [{ write: `GET /health HTTP/1.1\r\n${host}\r\nGET ${ota} HTTP/1.1\r\n${host}Connection: close\r\n\r\n` }], label: 'two pipelined requests', method: 'GET', mayNotAnswer: false, requests: 2 };
    }
    case 16:
      return one(`GET /health HTTP/1.1\nHost: x\n\n`, 'bare LF line ends');
    case 17:
      return { bytes: [{ write: `POST ${backup} HTTP/1.1\r\n${host}Content-Length: 100\r\n\r\nFFCE`, delayMs: rng.int(0, 50), destroy: true }], label: 'reset mid-body', method: 'POST', mayNotAnswer: true };
    case 18:
      return { bytes: [{ write: `GET /hea`, delayMs: rng.int(0, 50), end: true }], label: 'request line cut, FIN', method: 'GET', mayNotAnswer: false };
    case 19:
      return one(`PUT /admin/devices/x HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n${chunked([Buffer.from('{"public_'), Buffer.from('key":1}')]).toString('latin1')}`, 'chunked admin body', 'PUT');
    case 20:
      return one(`${rng.pick(['FOO', 'get', 'G E T', 'GET\t', 'PRI'])} /health HTTP/1.1\r\n${host}\r\n`, 'odd method');
    default:
      return one(`GET /health HTTP/1.0\r\n\r\n`, 'HTTP/1.0');
  }
}
