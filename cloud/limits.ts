// The HTTP limits of the cloud, in one object (docs/cloud-limits.md says why each value). Every limit
// bounds what an unauthenticated client can make the server hold: time, memory, or a connection.

export interface HttpLimits {
  /** The request line and all headers must arrive within this (slowloris on headers): 408. */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this: 408. */
  requestTimeoutMs: number;
  /** An upload body (backups) that sends nothing for this long is refused: 408. */
  bodyIdleTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (longer than a load balancer's 60 s). */
  keepAliveTimeoutMs: number;
  /** How often node:http looks for requests over headersTimeoutMs / requestTimeoutMs. */
  connectionsCheckingIntervalMs: number;
  /** Request line plus headers, in bytes (node's --max-http-header-size): 431 above it. */
  maxHeaderBytes: number;
  /** Header fields per request: 431 above it (node would silently drop those past its own count). */
  maxHeaderFields: number;
}

export const HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  bodyIdleTimeoutMs: 15_000,
  keepAliveTimeoutMs: 65_000,
  connectionsCheckingIntervalMs: 1_000,
  maxHeaderBytes: 16_384,
  maxHeaderFields: 100,
};
