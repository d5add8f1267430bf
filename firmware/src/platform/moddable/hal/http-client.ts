// Network.request: one HTTP/1.1 exchange per connection (http-exchange.ts) on Moddable's TCP `socket`,
// or on SecureSocket (modules/crypt/securesocket: Moddable's TLS 1.2) for https (tls-stream.ts). Both
// keep TCP's flow control: the board reads a response only as fast as the core consumes it, and
// writes an upload only as fast as the core produces it and the socket has room.
import { Socket } from 'socket';
import type { ClientRequest, ClientResponse } from '../../../hal/network.ts';
import { ClientExchange } from './http-exchange.ts';
import { parseUrl, requestHead, type RequestUrl } from './http-text.ts';
import type { StreamSocket } from './stream-socket.ts';
import { TlsStream } from './tls-stream.ts';

const DEFAULT_TIMEOUT_MS = 30_000;
/** The TLS record size asked for (RFC 6066 allows 512, 1024, 2048 or 4096). */
const MAX_FRAGMENT_BYTES = 4096;

export interface ClientOptions {
  /** The DER CA certificate for https, or undefined for SecureSocket's built-in CA store. */
  certificate: () => ArrayBuffer | HostBuffer | undefined;
}

export class BoardHttpClient {
  constructor(private readonly options: ClientOptions) {}

  request(req: ClientRequest): Promise<ClientResponse> {
    const what = `${req.method} ${req.url}`;
    let url: RequestUrl;
    let head: string;
    let bodyLength: number | undefined;
    try {
      url = parseUrl(req.url);
      if (req.body instanceof Uint8Array) bodyLength = req.body.length;
      else if (req.body) {
        if (req.bodyLength === undefined) throw new Error(`${what}: a streamed body needs bodyLength`);
        bodyLength = req.bodyLength;
      }
      head = requestHead(req.method, url, req.headers, bodyLength);
    } catch (err) {
      return Promise.reject(err);
    }
    let socket: StreamSocket;
    try {
      socket = url.secure ? this.tls(url) : (new Socket({ host: url.host, port: url.port }) as unknown as StreamSocket);
    } catch (err) {
      return Promise.reject(new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`));
    }
    const exchange = new ClientExchange(socket, { what, method: req.method, head, ...(req.body ? { body: req.body } : {}), bodyLength: bodyLength ?? 0, timeoutMs: req.timeoutMs ?? DEFAULT_TIMEOUT_MS });
    return exchange.response;
  }

  private tls(url: RequestUrl): TlsStream {
    const certificate = this.options.certificate();
    // RFC 6066 max_fragment_length: 4 KB records instead of 16 KB, where the server honours it
    // (documentation/network/securesocket.md: many ignore it); docs/moddable-build.md, "Memory".
    const secure = { protocolVersion: 0x303, tls_max_fragment_length: MAX_FRAGMENT_BYTES, ...(certificate ? { certificate } : {}) };
    return new TlsStream({ host: url.host, port: url.port, secure });
  }
}
