// The console's one way to the cloud: the admin API and /console/session through the web kit's client
// (web-common/browser/api-client.ts): same origin, the session cookie sent by the browser, the CSRF
// token (kept in memory only, never in storage or a URL) on every request that changes something.
// Each call names the status its route answers on success (cloud/schema/routes.ts); an error is the
// API's own code and message.
import { apiClient, errorText } from '../../../../web-common/browser/api-client.ts';

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

const client = apiClient({
  base: '',
  server: 'The cloud',
  unreachable: 'The cloud cannot be reached',
  headers: (method): Record<string, string> => (method !== 'GET' && csrfToken ? { 'x-csrf-token': csrfToken } : {}),
  onUnauthorized: (path) => {
    if (path !== '/console/session') onUnauthorized();
  },
});

export const api = client.request;

/** Path segments encoded, as the API expects them. */
export function apiPath(...segments: string[]): string {
  return '/' + segments.map(encodeURIComponent).join('/');
}

/** An error as the console shows it: the API's message and its code. */
export const describeError = (err: unknown) => errorText(err, { withCode: true });
