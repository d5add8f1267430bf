// HTTP over the board's interfaces. Each interface (Ethernet, SoftAP) has its own listener so the
// core always knows which interface a request came in on (DESIGN.md section 5). Bodies are chunk
// streams, never whole: a 512 KB backup does not fit the heap.

/** `station`: a client's Wi-Fi station interface, once it has joined the site network. */
export type Iface = 'ethernet' | 'softap' | 'station';

/** Pulls the next chunk; null at the end. */
export interface BodyReader {
  read(): Promise<Uint8Array | null>;
}

export interface HttpRequest {
  method: string;
  /** Path without the query, percent-decoded segments are the core's job. */
  path: string;
  query: Record<string, string>;
  /** Lower-case header names. */
  headers: Record<string, string>;
  iface: Iface;
  /** The associated station's MAC, on the SoftAP interface, when the platform knows it. */
  stationMac?: string;
  body: BodyReader;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  /** Whole (small) body, or a reader streamed out chunk by chunk. */
  body?: Uint8Array | BodyReader;
}

export type HttpHandler = (request: HttpRequest) => Promise<HttpResponse>;

export interface ClientRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array | BodyReader;
  /** Required with a BodyReader body: the exact byte count (no chunked uploads on the device). */
  bodyLength?: number;
  timeoutMs?: number;
}

export interface ClientResponse {
  status: number;
  headers: Record<string, string>;
  body: BodyReader;
}

/**
 * What a board may hold in memory for the requests it has not answered yet, shared by every interface
 * (docs/board-http-limits.md): the listeners take each connection and the bytes of its head from it,
 * the core the bodies it reads whole. take() answers false when the bytes are not there (the request
 * is then refused with 503 board_busy); give() returns them.
 */
export interface RequestMemory {
  take(bytes: number): boolean;
  give(bytes: number): void;
}

export interface Network {
  /** Serves `handler` on an interface's listener (port 80 on a board), its requests held within `memory`. */
  listen(iface: Iface, handler: HttpHandler, memory: RequestMemory): void;
  /** An HTTP(S) request from the board (Ethernet, or the Wi-Fi station when associated). */
  request(request: ClientRequest): Promise<ClientResponse>;
}
