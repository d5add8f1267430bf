// A web app's three files on its server (docs/web-kit.md): the page and its two assets, bundled from
// the app's web/ folder (bundle.ts), each with the page security headers, a strong ETag and
// `Cache-Control: no-cache`, so a browser asks again every time and an unchanged file is a 304.
// Only the exact paths: another case or a trailing slash falls through (the server's 404), whatever
// the router's matching.
import { Router, type Request, type Response } from 'express';
import { webBundle, type PageFile, type WebBundle } from './bundle.ts';
import { setPageSecurityHeaders } from './security-headers.ts';

export interface PagePaths {
  /** The page's own path: '/' or '/console'. */
  page: string;
  /** What its assets' names follow, ending with '/': their paths are `${assets}app.js` and `${assets}app.css`. */
  assets: string;
}

export function pageRoutes(webDir: string, at: PagePaths): Router {
  const files: Record<string, (b: WebBundle) => PageFile> = {
    [at.page]: (b) => b.html,
    [`${at.assets}app.js`]: (b) => b.js,
    [`${at.assets}app.css`]: (b) => b.css,
  };
  const router = Router();
  for (const [path, pick] of Object.entries(files)) {
    router.get(path, async (req: Request, res: Response, next) => {
      if (req.path !== path) return next();
      const file = pick(await webBundle(webDir));
      setPageSecurityHeaders(res);
      res.set({ 'content-type': file.type, 'cache-control': 'no-cache', etag: file.etag });
      if (req.fresh) return void res.status(304).end();
      res.send(file.body);
    });
  }
  return router;
}
