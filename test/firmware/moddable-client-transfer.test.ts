// The text of HTTP/1.1 on a board (hal/http-text.ts): the request targets and response heads of its
// listeners, the URLs and request heads of its own requests; and its MAC spellings. Pure code, on Node.
import { describe, expect, it } from 'vitest';
import { parseTarget, parseUrl, requestHead, responseHead } from '../../firmware/src/platform/moddable/hal/http-text.ts';
import { macBytes, macList, macText } from '../../firmware/src/platform/moddable/hal/buffers.ts';

describe('request targets and response heads', () => {
  it('takes origin-form and absolute-form targets, keeps the path encoded, decodes the query', () => {
    expect(parseTarget('/api/controllers/a%2Fb?x=%41+b&y')).toEqual({ path: '/api/controllers/a%2Fb', query: { x: 'A b', y: '' } });
    expect(parseTarget('http://192.168.4.1/backup?z=1')).toEqual({ path: '/backup', query: { z: '1' } });
    expect(parseTarget('http://host')).toEqual({ path: '/', query: {} });
    expect(parseTarget('/?bad=%zz')).toEqual({ path: '/', query: { bad: '%zz' } });
    expect(() => parseTarget('*')).toThrow(/origin-form/);
  });

  it('writes one connection: close and refuses line breaks in headers', () => {
    const head = new TextDecoder().decode(responseHead(404, { 'content-length': '0', Connection: 'keep-alive' }));
    expect(head).toBe('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
    expect(() => responseHead(200, { x: 'a\r\nb' })).toThrow(/line break/);
  });
});

describe('MAC spellings', () => {
  it('converts between bytes and the core spelling', () => {
    expect(macText(new Uint8Array([0x24, 0x0a, 0xc4, 0x12, 0x34, 0x56]))).toBe('24:0A:C4:12:34:56');
    expect([...macBytes('24-0a-c4-12-34-56')]).toEqual([0x24, 0x0a, 0xc4, 0x12, 0x34, 0x56]);
    expect(macList(new Uint8Array(12).fill(1).buffer)).toEqual(['01:01:01:01:01:01', '01:01:01:01:01:01']);
    expect(() => macBytes('nope')).toThrow(/not a MAC/);
  });
});

describe("the board's own requests", () => {
  it('parses http and https URLs, with ports, IPv6 hosts and a bare query', () => {
    expect(parseUrl('http://127.0.0.3:8080/backup')).toEqual({ secure: false, host: '127.0.0.3', port: 8080, path: '/backup' });
    expect(parseUrl('https://[::1]/ota?x=1')).toEqual({ secure: true, host: '[::1]', port: 443, path: '/ota?x=1' });
    expect(parseUrl('http://cloud.example?v=1')).toEqual({ secure: false, host: 'cloud.example', port: 80, path: '/?v=1' });
    expect(() => parseUrl('ftp://x/')).toThrow(/not an http\(s\) URL/);
  });

  it("writes Host with a port that is not the scheme's, the body's length, one request per connection", () => {
    const url = parseUrl('http://127.0.0.3:8080/backup');
    expect(requestHead('PUT', url, { 'visual-token': 't', Connection: 'keep-alive', 'Content-Length': '9' }, 12)).toBe(
      'PUT /backup HTTP/1.1\r\nvisual-token: t\r\nhost: 127.0.0.3:8080\r\ncontent-length: 12\r\nconnection: close\r\n\r\n',
    );
    expect(requestHead('GET', parseUrl('https://cloud.example/x'), { Host: 'other' }, undefined)).toBe('GET /x HTTP/1.1\r\nHost: other\r\nconnection: close\r\n\r\n');
    expect(() => requestHead('GET', url, { x: 'a\r\nb' }, undefined)).toThrow(/line break/);
  });
});
