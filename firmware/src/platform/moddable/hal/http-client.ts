// Network.request on Moddable's `http` Request (modules/network/http/http.js), with SecureSocket
// (modules/crypt/securesocket: Moddable's TLS 1.2) for https. Its callback protocol is synchronous:
// - `requestFragment` must return the next piece of an upload at once. The upload pump keeps the next
//   chunk read ahead; the core's readers produce chunks within the promise jobs that follow the
//   previous one (flash + crypto), which XS runs before the next network report (xs/platforms/esp/
//   xsHost.c posts promise jobs as a message, in order). If a chunk is still missing, 0 bytes are
//   offered and the next "writable" report asks again; with nothing in flight the request's
//   time-out ends it. //@@ a reader slower than that (e.g. a proxied network stream) would need a
//   socket-level upload like http-response.ts.
// - `responseFragment` hands over what arrived; it is queued for the core's reader, bounded
//   (a reader that does not keep up fails the request instead of exhausting the heap).
// The time-out is a "no progress" time-out: re-armed by every fragment, so a long download that
// keeps moving (an OTA image) is not cut.
import { Request } from 'http';
import SecureSocket from 'securesocket';
import Timer from 'timer';
import type { ClientRequest, ClientResponse } from '../../../hal/network.ts';
import { DownloadQueue, UploadPump } from './http-transfer.ts';

const DEFAULT_TIMEOUT_MS = 30_000;
/** The TLS record size asked for (RFC 6066 allows 512, 1024, 2048 or 4096). */
const MAX_FRAGMENT_BYTES = 4096;
/** Two TLS records (16 KB each) of a response the core has not read yet. */
const MAX_QUEUED_BYTES = 32 * 1024;

export interface ClientOptions {
  /** The DER CA certificate for https, or undefined for SecureSocket's built-in CA store. */
  certificate: () => ArrayBuffer | HostBuffer | undefined;
}

function parseUrl(url: string): { secure: boolean; host: string; port: number; path: string } {
  const m = /^(https?):\/\/(\[[0-9A-Fa-f:.]+\]|[^/:?#\s]+)(?::(\d{1,5}))?([/?][^#\s]*)?$/.exec(url);
  if (!m) throw new Error(`not an http(s) URL: ${JSON.stringify(url)}`);
  const secure = m[1] === 'https';
  const path = m[4] ?? '/';
  return { secure, host: m[2]!, port: m[3] ? Number(m[3]) : secure ? 443 : 80, path: path.startsWith('?') ? `/${path}` : path };
}

export class BoardHttpClient {
  constructor(private readonly options: ClientOptions) {}

  request(req: ClientRequest): Promise<ClientResponse> {
    const { secure, host, port, path } = parseUrl(req.url);
    const what = `${req.method} ${req.url}`;
    const headers: string[] = [];
    for (const [name, value] of Object.entries(req.headers)) headers.push(name, value);
    // http.js writes "Host: <host>" without the port; a cloud on another port gets it with its port.
    const defaultPort = secure ? 443 : 80;
    if (port !== defaultPort && !Object.keys(req.headers).some((name) => name.toLowerCase() === 'host')) headers.push('host', `${host}:${port}`);
    let body: boolean | ArrayBuffer | undefined;
    let upload: UploadPump | undefined;
    if (req.body instanceof Uint8Array) {
      // http.js sends an ArrayBuffer body whole and adds its content-length.
      const b = req.body;
      body = b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? (b.buffer as ArrayBuffer) : b.slice().buffer;
    } else if (req.body) {
      if (req.bodyLength === undefined) return Promise.reject(new Error(`${what}: a streamed body needs bodyLength`));
      headers.push('content-length', String(req.bodyLength));
      body = true;
      upload = new UploadPump(req.body, req.bodyLength);
    }
    const certificate = secure ? this.options.certificate() : undefined;
    // RFC 6066 max_fragment_length: 4 KB records instead of 16 KB, where the server honours it
    // (documentation/network/securesocket.md: many ignore it); docs/moddable-build.md, "Memory".
    const tls = secure ? { Socket: SecureSocket, secure: { protocolVersion: 0x303, tls_max_fragment_length: MAX_FRAGMENT_BYTES, ...(certificate ? { certificate } : {}) } } : {};
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;

    return new Promise<ClientResponse>((resolve, reject) => {
      const download = new DownloadQueue(MAX_QUEUED_BYTES);
      const responseHeaders: Record<string, string> = {};
      let status = 0;
      let answered = false;
      let timer: Timer | undefined;
      let request: Request | undefined;
      const finish = (failure?: Error) => {
        if (timer !== undefined) Timer.clear(timer);
        timer = undefined;
        if (failure) {
          try {
            request?.close();
          } catch {
            /* already closed */
          }
          if (answered) download.fail(failure);
          else reject(failure);
        } else download.end();
      };
      const progress = () => {
        if (timer !== undefined) Timer.clear(timer);
        timer = Timer.set(() => finish(new Error(`${what}: no progress for ${timeoutMs} ms`)), timeoutMs);
      };
      download.onOverflow = () => finish(new Error(`${what}: the response arrives faster than it is read (over ${MAX_QUEUED_BYTES} bytes queued)`));
      progress();
      try {
        request = new Request({ host, port, path, method: req.method, headers, ...(body !== undefined ? { body } : {}), ...tls });
      } catch (err) {
        return finish(err instanceof Error ? err : new Error(String(err)));
      }
      const current = request;
      // Numbers from http.js (Request.requestFragment = 0 … Request.error = -2); the typings give
      // responseFragment the value of headersComplete and error -1, so the statics are used as values.
      current.callback = (message: number, value?: unknown, etc?: unknown) => {
        if (message === Request.requestFragment) return upload?.next(Number(value), (err) => finish(err));
        if (message === Request.status) status = Number(value);
        else if (message === Request.header) {
          const name = String(value);
          responseHeaders[name] = name in responseHeaders ? `${responseHeaders[name]}, ${String(etc)}` : String(etc);
        } else if (message === Request.headersComplete) {
          answered = true;
          progress();
          resolve({ status, headers: responseHeaders, body: download });
        } else if (message === Request.responseFragment) {
          progress();
          download.push(current.read(ArrayBuffer));
        } else if (message === Request.responseComplete) finish();
        else if (message === Request.error) finish(new Error(`${what}: ${value === undefined ? 'connection failed' : String(value)}`));
        return undefined;
      };
    });
  }
}
