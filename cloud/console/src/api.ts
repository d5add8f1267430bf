// The console's one way to the cloud: the admin API and /console/session, same origin, the session
// cookie sent by the browser, the CSRF token (kept in memory only, never in storage or a URL) on every
// request that changes something. An error is the API's own code and message.
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;

/** Set at log-in (and after a reload, from GET /console/session); cleared at log-out. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when the session is gone (401): the console goes back to its log-in form. */
let onUnauthorized: () => void = () => undefined;
export function whenUnauthorized(f: () => void): void {
  onUnauthorized = f;
}

export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' });
  } catch {
    throw new ApiFailure(0, undefined, 'The cloud cannot be reached');
  }
  if (res.status === 204) return undefined as T;
  const data = (await res.json().catch(() => null)) as { error?: string; message?: string } | null;
  if (!res.ok) {
    if (res.status === 401 && path !== '/console/session') onUnauthorized();
    throw new ApiFailure(res.status, data?.error, data?.message ?? `The cloud answered ${res.status}`);
  }
  return data as T;
}

/** Path segments encoded, as the API expects them. */
export function apiPath(...segments: string[]): string {
  return '/' + segments.map(encodeURIComponent).join('/');
}

export function describeError(err: unknown): string {
  if (err instanceof ApiFailure) return err.code ? `${err.message} (${err.code})` : err.message;
  return err instanceof Error ? err.message : String(err);
}
