// A real HTTP server on 127.0.0.1 standing in for a controller whose answers a test chooses (one
// that misbehaves, or one that only has to take a log-in), and that records what it was asked: the
// method, the path and the visual-token each request carried. Answers not chosen are the device
// API's (docs/firmware-api.md): a log-in with any password gets a fresh token, HEAD /backup without
// a token 401, anything else 404 route_not_found.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInAnswer {
  status: number;
  /** A value is sent as JSON; a string as it is (with the content type in `headers`). */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface SeenRequest {
  method: string;
  path: string;
  token: string | null;
}

export interface StandInController {
  /** http://127.0.0.1:port, as a controller's address is entered. */
  url: string;
  seen: SeenRequest[];
  /** The tokens its log-ins handed out, oldest first. */
  issued: string[];
  /** Answers `METHOD /path` with this from now on. */
  answer(route: string, a: StandInAnswer): void;
  close(): Promise<void>;
}

const apiError = (status: number, error: string, message: string): StandInAnswer => ({ status, body: { error, message } });

export async function startStandInController(): Promise<StandInController> {
  const chosen = new Map<string, StandInAnswer>();
  const seen: SeenRequest[] = [];
  const issued: string[] = [];
  const standard = (req: IncomingMessage): StandInAnswer => {
    if (req.method === 'POST' && req.url === '/api/login') {
      const token = randomBytes(16).toString('hex');
      issued.push(token);
      return { status: 200, body: { token, expires_in: 1800 } };
    }
    if (req.headers['visual-token'] === undefined) return apiError(401, 'missing_visual_token', 'This route needs a visual-token');
    return apiError(404, 'route_not_found', 'No such route');
  };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const token = req.headers['visual-token'];
      seen.push({ method: req.method ?? '', path: req.url ?? '', token: typeof token === 'string' ? token : null });
      const a = chosen.get(`${req.method} ${req.url}`) ?? standard(req);
      const text = a.body === undefined ? '' : typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
      const type = typeof a.body === 'string' || a.body === undefined ? {} : { 'content-type': 'application/json' };
      res.writeHead(a.status, { ...type, 'content-length': String(Buffer.byteLength(text)), ...a.headers });
      res.end(req.method === 'HEAD' ? undefined : text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    issued,
    answer: (route, a) => void chosen.set(route, a),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
