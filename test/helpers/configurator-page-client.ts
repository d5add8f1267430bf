// The configurator's API as its page calls it (the x-fleet-page header, the session cookie it is
// given): for tests that drive the server without a browser.
export interface PageAnswer {
  status: number;
  json: any;
}

/** A caller that keeps the session cookie the server sets; `base` is read at each call (the server starts later). */
export function pageClient(base: () => string): (method: string, path: string, body?: unknown) => Promise<PageAnswer> {
  let cookie = '';
  return async (method, path, body) => {
    const res = await fetch(base() + path.replace(/^\//, ''), {
      method,
      headers: { 'x-fleet-page': '1', ...(cookie ? { cookie } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const set = res.headers.get('set-cookie');
    if (set) cookie = set.split(';')[0]!;
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  };
}
