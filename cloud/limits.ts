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
  /** Store operations at work at once, queued behind them, and how long one may wait: 503 past these (docs/fleet-scale.md). */
  storeMaxActive: number;
  storeMaxQueued: number;
  storeMaxWaitMs: number;
  /** Backup uploads past authentication at once (each may hold up to 512 KB), queued, wait: 503 past these. */
  uploadMaxActive: number;
  uploadMaxQueued: number;
  uploadMaxWaitMs: number;
  /** The Retry-After of a 503 store_saturated while a gate's drain rate is not known yet, and the least one given, in seconds. */
  retryAfterSeconds: number;
  /** The longest Retry-After given: past the drain time of the queue the refused are spread up to this (cloud/admission.ts). */
  retryAfterMaxSeconds: number;
  /** Pending connections the kernel queues before accept (node's default, 511, drops SYNs in a boot storm; Linux caps it at net.core.somaxconn). */
  listenBacklog: number;
}

export const HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  bodyIdleTimeoutMs: 15_000,
  keepAliveTimeoutMs: 65_000,
  connectionsCheckingIntervalMs: 1_000,
  maxHeaderBytes: 16_384,
  maxHeaderFields: 100,
  storeMaxActive: 32,
  storeMaxQueued: 2048,
  storeMaxWaitMs: 5_000,
  uploadMaxActive: 64,
  uploadMaxQueued: 4096,
  uploadMaxWaitMs: 20_000,
  retryAfterSeconds: 2,
  retryAfterMaxSeconds: 30,
  listenBacklog: 4096,
};

/**
 * 512 KB (spec 8): the largest backup blob the cloud accepts. The error catalog (errors.ts) reads it,
 * and the catalog is also compiled for the operator console in the browser. The firmware's
 * MAX_CLOUD_BLOB_BYTES is the same figure (test/firmware/backup-limits.test.ts).
 */
export const MAX_BACKUP_BYTES = 524_288;
