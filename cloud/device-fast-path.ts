// Devices' own POSTs answered before Express (docs/fleet-scale.md): a backup push and a health report
// are what a boot storm sends, and for a request this small Express's routing is a large part of the
// cost. The target devices send (`/devices/{uuid}/backup`, `/devices/{uuid}/health`: nothing to decode)
// is answered here with the same function as the Express route; any other spelling goes to Express.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { renderError } from './http.ts';
import type { FunctionLogger } from './logging.ts';

export type DeviceRoute = '/backup' | '/health';
/** A device's POST on node's request and response, given the raw UUID segment of its path. */
export type DeviceHandler = (req: IncomingMessage, res: ServerResponse, pathUuid: string) => Promise<void>;

/** `/devices/{uuid}<route>` exactly as devices send it: the raw UUID segment; undefined for any other target. */
export function canonicalDeviceUuid(url: string, route: DeviceRoute): string | undefined {
  if (!url.startsWith('/devices/') || !url.endsWith(route)) return undefined;
  const segment = url.slice('/devices/'.length, -route.length);
  // Anything Express would decode or match differently (encoding, a query, more segments) goes to Express.
  return segment === '' || /[/%?#]/.test(segment) ? undefined : segment;
}

/**
 * Answers `POST /devices/{uuid}<route>` (the canonical target) before Express and returns true;
 * anything else returns false, and Express answers with the same function. With DEBUG on for the
 * route's function, Express answers every one (its per-request DEBUG line).
 */
export function deviceFastPath(route: DeviceRoute, handle: DeviceHandler, log: FunctionLogger): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const url = req.url;
    if (req.method !== 'POST' || url === undefined) return false;
    const uuid = canonicalDeviceUuid(url, route);
    if (uuid === undefined || log.enabled('DEBUG')) return false;
    handle(req, res, uuid).catch((err: unknown) => renderError(res, err, log, { method: 'POST', path: url.slice(0, 256) }));
    return true;
  };
}
