// GET /console and its two assets: the operator console's static files (built by npm run
// build:console into CONSOLE_DIR), each with the page security headers (cloud/web/security-headers.ts).
// The console is one page with hash routes (#/devices…), so nothing else is served here; its API is
// the admin API itself (and /console/session, ./session.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Router, type Response } from 'express';
import { ApiError } from '../errors.ts';
import { setPageSecurityHeaders } from '../web/security-headers.ts';

/** Route, file in CONSOLE_DIR, media type. */
export const CONSOLE_FILES = [
  { path: '/console', file: 'index.html', type: 'text/html' },
  { path: '/console/app.js', file: 'app.js', type: 'text/javascript' },
  { path: '/console/app.css', file: 'app.css', type: 'text/css' },
] as const;

export function consoleRoutes(dir: string): Router {
  const router = Router();
  // Read once per process (a build while the cloud runs is picked up on restart).
  const cache = new Map<string, Buffer>();
  for (const entry of CONSOLE_FILES) {
    router.get(entry.path, (_req, res: Response) => {
      let bytes = cache.get(entry.file);
      if (!bytes) {
        try {
          bytes = readFileSync(join(dir, entry.file));
        } catch {
          throw new ApiError('console_not_built', { dir }, `The console is not built in ${dir}: run npm run build:console`);
        }
        cache.set(entry.file, bytes);
      }
      setPageSecurityHeaders(res);
      res.setHeader('cache-control', entry.file === 'index.html' ? 'no-store' : 'no-cache');
      res.writeHead(200, { 'content-type': `${entry.type}; charset=utf-8`, 'content-length': bytes.length });
      res.end(bytes);
    });
  }
  return router;
}
