// Every answer is a JSON error of the catalog, even to bytes that are not a valid request: node:http's
// own empty-bodied 400/431/417, Express's HTML 404 for an unparsable target and its text/plain answer
// to OPTIONS are all taken over (cloud/transport.ts, docs/cloud-limits.md). Sent over raw sockets, so
// that the malformed bytes reach the cloud as written.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunked, httpRequest, rawExchange, type RawResponse } from '../../tools/fuzz/raw-http.ts';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';

let cloud: TestCloud;
let target: { host: string; port: number };
let bearer: [string, string];

beforeAll(async () => {
  cloud = await startTestCloud();
  target = { host: '127.0.0.1', port: Number(new URL(cloud.url).port) };
  bearer = ['Authorization', `Bearer ${await cloud.token()}`];
});
afterAll(() => cloud.close());

async function one(bytes: string | Buffer, method = 'GET'): Promise<RawResponse> {
  const result = await rawExchange(target, bytes, { methods: [method], expectResponses: 1, timeoutMs: 3000 });
  expect(result.responses, `no answer to ${String(bytes).slice(0, 60)}`).toHaveLength(1);
  return result.responses[0]!;
}

function json(res: RawResponse): unknown {
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(Number(res.headers['content-length'])).toBe(res.body.length);
  return JSON.parse(res.body.toString('utf8'));
}

const HOST = 'Host: 127.0.0.1\r\n';

describe('request targets', () => {
  it('an absolute-form target that is not a URL is a JSON 400 (was Express’s HTML 404)', async () => {
    const res = await one(`GET http://[/health HTTP/1.1\r\n${HOST}\r\n`);
    expect(res.status).toBe(400);
    expect(json(res)).toEqual({ error: 'bad_request', message: 'The request target must be a path (/...) or an absolute http URL', details: { target: 'http://[/health' } });
  });

  it('an absolute-form http URL is routed by its path (RFC 9112 3.2.2)', async () => {
    const res = await one(`GET http://fleet.example:8080/health?x=1 HTTP/1.1\r\n${HOST}\r\n`);
    expect(res.status).toBe(200);
    expect(json(res)).toMatchObject({ status: 'ok' });
    const ota = await one(`GET https://fleet.example/ota/ctl/0x00000001/ctl HTTP/1.1\r\n${HOST}\r\n`);
    expect(ota.status).toBe(404);
    expect(json(ota)).toMatchObject({ error: 'firmware_not_found' });
  });

  it('the asterisk form is a JSON 400', async () => {
    const res = await one(`OPTIONS * HTTP/1.1\r\n${HOST}\r\n`, 'OPTIONS');
    expect(res.status).toBe(400);
    expect(json(res)).toMatchObject({ error: 'bad_request', details: { target: '*' } });
  });
});

describe('bytes that are not HTTP/1.1 (node:http clientError)', () => {
  it.each([
    ['a request line without a version', 'GARBAGE\r\n\r\n', 'HPE_INVALID_METHOD'],
    ['an unknown method token', `FOO /health HTTP/1.1\r\n${HOST}\r\n`, 'HPE_INVALID_METHOD'],
    ['a header name with a space', `GET /health HTTP/1.1\r\n${HOST}Bad Header: x\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    ['Content-Length and Transfer-Encoding together', `POST /health HTTP/1.1\r\n${HOST}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, 'HPE_INVALID_TRANSFER_ENCODING'],
    ['two different Content-Length values', `GET /health HTTP/1.1\r\n${HOST}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello`, 'HPE_UNEXPECTED_CONTENT_LENGTH'],
  ])('%s: JSON 400 naming the parser error, connection closed', async (_label, bytes, reason) => {
    const result = await rawExchange(target, bytes, { timeoutMs: 3000 });
    expect(result.closed).toBe(true);
    const res = result.responses[0]!;
    expect(res.status).toBe(400);
    expect(res.headers.connection).toBe('close');
    expect(json(res)).toEqual({ error: 'bad_request', message: expect.stringMatching(/^The request is not valid HTTP\/1\.1: /), details: { reason } });
  });

  it('a bad chunk size in an upload is a JSON 400', async () => {
    const res = await one(`POST /devices/dev-x/backup HTTP/1.1\r\n${HOST}Transfer-Encoding: chunked\r\nContent-Type: application/octet-stream\r\n\r\nzz\r\nabc\r\n`, 'POST');
    // The whole request arrives in one segment: node's parser reaches the bad chunk in the same pass
    // that emits the request, before the route's (asynchronous) header checks can answer.
    expect(res.status).toBe(400);
    expect(json(res)).toEqual({ error: 'bad_request', message: expect.stringContaining('Invalid character in chunk size'), details: { reason: 'HPE_INVALID_CHUNK_SIZE' } });
    const direct = await one(`PUT /admin/devices/dev-x HTTP/1.1\r\n${HOST}Authorization: ${bearer[1]}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, 'PUT');
    expect(direct.status).toBe(400);
    expect(json(direct)).toEqual({ error: 'bad_request', message: expect.stringContaining('Invalid character in chunk size'), details: { reason: 'HPE_INVALID_CHUNK_SIZE' } });
  });

  it('headers over 16 KB are a JSON 431', async () => {
    const res = await one(`GET /health HTTP/1.1\r\n${HOST}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(json(res)).toEqual({ error: 'header_too_large', message: 'The request headers are too large' });
  });

  it('more than 100 header fields are a JSON 431 (node would silently drop those past its count)', async () => {
    let fields = '';
    for (let i = 0; i < 150; i++) fields += `X-F${i}: v\r\n`;
    const res = await one(`GET /health HTTP/1.1\r\n${HOST}${fields}\r\n`);
    expect(res.status).toBe(431);
    expect(json(res)).toEqual({ error: 'header_too_large', message: 'A request may have at most 100 header fields', details: { max_fields: 100 } });
  });

  it('an HTTP/1.1 request without Host is a JSON 400 (node’s own has no body)', async () => {
    const res = await one('GET /health HTTP/1.1\r\n\r\n');
    expect(res.status).toBe(400);
    expect(json(res)).toEqual({ error: 'bad_request', message: 'An HTTP/1.1 request must have a Host header', details: { header: 'host' } });
  });

  it('a request line cut short by FIN is a JSON 400', async () => {
    const result = await rawExchange(target, [{ write: 'GET /hea', end: true }], { timeoutMs: 3000 });
    expect(result.responses[0]?.status).toBe(400);
    expect(json(result.responses[0]!)).toMatchObject({ error: 'bad_request' });
  });
});

describe('methods', () => {
  it.each([
    ['OPTIONS', '/health', 'GET, HEAD'],
    ['TRACE', '/health', 'GET, HEAD'],
    ['OPTIONS', '/admin/devices/dev-1', 'GET, PUT, DELETE, HEAD'],
    ['PATCH', '/devices/dev-1/backup', 'POST, GET, DELETE, HEAD'],
    ['PROPFIND', '/ota/ctl/0x00000001/ctl', 'GET, HEAD'],
    ['GET', '/appconfig/svc-func-ota/deploy', 'POST'],
  ])('%s %s on a route without it: JSON 405 with Allow: %s', async (method, path, allow) => {
    const res = await one(`${method} ${path} HTTP/1.1\r\n${HOST}\r\n`, method);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(json(res)).toEqual({
      error: 'method_not_allowed',
      message: `${method} is not allowed here; allowed: ${allow}`,
      details: { method, allowed: allow.split(', ') },
    });
  });

  it('OPTIONS on a path that is no route: JSON 404', async () => {
    const res = await one(`OPTIONS /nowhere HTTP/1.1\r\n${HOST}\r\n`, 'OPTIONS');
    expect(res.status).toBe(404);
    expect(json(res)).toEqual({ error: 'route_not_found', message: 'No such route', details: { method: 'OPTIONS', path: '/nowhere' } });
  });

  it('CONNECT: JSON 400 (node used to drop the connection without a word)', async () => {
    const res = await one(`CONNECT 127.0.0.1:443 HTTP/1.1\r\n${HOST}\r\n`, 'CONNECT');
    expect(res.status).toBe(400);
    expect(json(res)).toEqual({ error: 'bad_request', message: 'CONNECT is not supported', details: { method: 'CONNECT' } });
  });
});

describe('Expect and bodies', () => {
  it('an Expect other than 100-continue is a JSON 417', async () => {
    const res = await one(`GET /health HTTP/1.1\r\n${HOST}Expect: something-else\r\n\r\n`);
    expect(res.status).toBe(417);
    expect(json(res)).toEqual({ error: 'expectation_failed', message: 'Only Expect: 100-continue is supported' });
  });

  it('Expect: 100-continue still works', async () => {
    const result = await rawExchange(target, httpRequest('GET', '/health', [['Expect', '100-continue'], ['Connection', 'close']]), { expectResponses: 1 });
    expect(result.responses[0]?.status).toBe(200);
  });

  it('a GET with a body is a JSON 400 and the connection is closed', async () => {
    const result = await rawExchange(target, `GET /health HTTP/1.1\r\n${HOST}Content-Length: 5\r\n\r\nhello`, { timeoutMs: 3000 });
    expect(result.closed).toBe(true);
    expect(result.responses[0]!.status).toBe(400);
    expect(json(result.responses[0]!)).toEqual({ error: 'body_not_allowed', message: 'A GET or HEAD request must not have a body' });
  });

  it('a GET on the OTA route with a chunked body is refused the same way (ahead of the fast path)', async () => {
    const res = await one(httpRequest('GET', '/ota/ctl/0x00000001/ctl', [['Transfer-Encoding', 'chunked']], chunked([Buffer.from('x')]), { lengthHeader: false }));
    expect(res.status).toBe(400);
    expect(json(res)).toMatchObject({ error: 'body_not_allowed' });
  });
});

describe('JSON routes (admin, appconfig)', () => {
  const patch = (headers: [string, string][], body: Buffer | string) =>
    one(httpRequest('PATCH', '/appconfig/svc-func-ota', [bearer, ...headers, ['Connection', 'close']], body), 'PATCH');

  it.each([
    ['text/plain', [['Content-Type', 'text/plain']]],
    ['a charset other than UTF-8', [['Content-Type', 'application/json; charset=latin1']]],
    ['a gzip-encoded body', [['Content-Type', 'application/json'], ['Content-Encoding', 'gzip']]],
  ] as [string, [string, string][]][])('%s is a JSON 415', async (label, headers) => {
    const body = label === 'a gzip-encoded body' ? gzipSync('{"logging":"INFO"}') : '{"logging":"INFO"}';
    const res = await patch(headers, body);
    expect(res.status).toBe(415);
    expect(json(res)).toMatchObject({ error: 'unsupported_media_type', message: expect.any(String) });
    expect(((await (await cloud.admin('GET', '/appconfig/svc-func-ota')).json()) as { staged: unknown }).staged).toBeNull();
  });

  it('a body nested 30,000 deep is a JSON 400 (its echo used to overflow the stack: an HTML 500 with a stack trace)', async () => {
    const deep = `{"logging":${'['.repeat(30_000)}${']'.repeat(30_000)}}`;
    const res = await patch([['Content-Type', 'application/json']], deep);
    expect(res.status).toBe(400);
    expect(json(res)).toEqual({
      error: 'invalid_log_level',
      message: 'The log level must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL',
      details: { key: 'logging', value: null, type: 'array', allowed: ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] },
    });
    expect(cloud.logs.filter((l) => l.level === 'ERROR')).toEqual([]);
  });

  it('a release URL with a control character is a 400 (PostgreSQL refuses NUL in text: it was a 500 there)', async () => {
    for (const url of ['https://fw.example/a\u0000.bin', 'https://fw.example/a b.bin', 'https://fw.example/a\n.bin']) {
      const res = await cloud.admin('PUT', '/admin/firmware/ctl/0x00000001/ctl/2026.01.01', { url });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'invalid_release_metadata', message: `url: expected an http or https URL, got ${JSON.stringify(url)}`, details: { field: 'url', value: url, expected: 'an http or https URL' } });
    }
    expect((await cloud.admin('GET', '/admin/firmware/ctl/0x00000001/ctl').then((r) => r.json())) as unknown).toEqual({ versions: [] });
  });

  it('hundreds of unknown keys are named, cut to 16', async () => {
    const body: Record<string, number> = {};
    for (let i = 0; i < 500; i++) body[`k${i}${'x'.repeat(100)}`] = i;
    const res = await cloud.admin('PATCH', '/appconfig/svc-func-ota', body);
    expect(res.status).toBe(400);
    const b = (await res.json()) as { error: string; details: { keys: string[] } };
    expect(b.error).toBe('unknown_configuration_key');
    expect(b.details.keys).toHaveLength(16);
    expect(b.details.keys[0]).toHaveLength(64);
  });

  it('an unauthenticated body is never parsed: 401 before the JSON (it used to be parsed first: 400 invalid_json)', async () => {
    const res = await one(httpRequest('PUT', '/admin/devices/dev-x', [['Content-Type', 'application/json'], ['Connection', 'close']], '{"public_key": '), 'PUT');
    expect(res.status).toBe(401);
    expect(json(res)).toEqual({ error: 'missing_token', message: 'An Authorization: Bearer token is required' });
  });

  it('an unauthenticated OPTIONS under /admin answers 405 with Allow (Express answered 200 text/plain)', async () => {
    const res = await one(`OPTIONS /admin/devices HTTP/1.1\r\n${HOST}\r\n`, 'OPTIONS');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(json(res)).toMatchObject({ error: 'method_not_allowed' });
  });
});

describe('an answer given before the body is read (lingering close)', () => {
  // Closing with unread bytes makes the kernel reset the connection, and a client still writing its
  // body then loses the answer with the reset (the fuzz caught it: a 512 KB POST with Connection:
  // close to a route that refuses on its headers). The cloud now reads the rest away, then closes.
  it('keeps the connection while the body still arrives, then closes cleanly after it', async () => {
    const { connect } = await import('node:net');
    const socket = connect(target.port, target.host);
    await new Promise((r) => socket.once('connect', r));
    const events: string[] = [];
    let received = '';
    socket.on('data', (d) => (received += d.toString('latin1')));
    socket.on('end', () => events.push('end'));
    socket.on('error', (e: NodeJS.ErrnoException) => events.push(`error ${e.code}`));
    socket.on('close', () => events.push('close'));
    const total = 1_000_000;
    socket.write(`POST /nowhere HTTP/1.1\r\n${HOST}Connection: close\r\nContent-Length: ${total}\r\n\r\n`);
    socket.write(Buffer.alloc(1000, 1));
    for (let i = 0; i < 100 && !received.includes('route_not_found'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(received).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(received).toContain('{"error":"route_not_found","message":"No such route","details":{"method":"POST","path":"/nowhere"}}');
    await new Promise((r) => setTimeout(r, 200));
    expect(events).toEqual([]); // still open: the body is not complete
    socket.end(Buffer.alloc(total - 1000, 2));
    for (let i = 0; i < 100 && !events.includes('close'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(events).toEqual(['end', 'close']); // a FIN from the cloud, no reset
  });

  it('a malformed rest of the body gets no second answer: the connection just closes', async () => {
    const result = await rawExchange(
      target,
      [{ write: `POST /nowhere HTTP/1.1\r\n${HOST}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n`, delayMs: 100 }, { write: 'zz\r\n' }],
      { methods: ['POST', 'POST'], timeoutMs: 3000 },
    );
    expect(result.closed).toBe(true);
    expect(result.responses.map((r) => r.status)).toEqual([404]);
    expect(result.trailing.length).toBe(0);
  });

  it('gives up on a body past 4 MiB: the connection is reset', async () => {
    const result = await rawExchange(target, [{ write: `POST /nowhere HTTP/1.1\r\n${HOST}Content-Length: 10000000\r\n\r\n` }, { write: Buffer.alloc(5 * 1024 * 1024) }], { methods: ['POST'], timeoutMs: 5000 });
    expect(result.timedOut).toBe(false);
    expect(result.closed).toBe(true);
  });
});
