// The one way a page of the project reaches its own server (docs/web-kit.md): same origin, JSON in and
// out, the browser's cookies, nothing cached. Each call names the status its route answers on success
// (200, 201 for a creation, 202, 204 for no content): any other answer, another 2xx included, is an
// error, never a success. An error of the server's API keeps its status, code, message and details as
// they are, for the page to show.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The statuses a route answers on success. */
export type Success = 200 | 201 | 202 | 204;

export interface Call {
  /** A JSON body. */
  body?: unknown;
  /** A body already in JSON text (a configuration as imported, byte for byte). */
  raw?: string;
  /** What the route answers on success; 200 when not said. */
  success?: Success | readonly Success[];
}

export interface ApiClientOptions {
  /** Put before every path: '/api' for the configurator, '' for the console. */
  base: string;
  /** Who answers, in messages: "The configurator", "The cloud". */
  server: string;
  /** What the page says when its server does not answer at all. */
  unreachable: string;
  /** A request's own headers: the configurator's page header, the console's CSRF token. */
  headers?: (method: string) => Record<string, string>;
  /** Told of every 401 (a session that ended). */
  onUnauthorized?: (path: string) => void;
}

export interface ApiClient {
  request<T>(method: string, path: string, call?: Call): Promise<T>;
  /** A file the server offers for download (200 and Content-Disposition), as a Blob and its name. */
  download(path: string, fallbackName: string): Promise<{ blob: Blob; name: string }>;
}

const listed = (statuses: readonly number[]) => statuses.join(' or ');

/** An answer's body as JSON; undefined when it is empty or not JSON. */
function jsonOf(text: string): any {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function apiClient(o: ApiClientOptions): ApiClient {
  const send = async (method: string, path: string, init: { body?: string; json: boolean }): Promise<Response> => {
    try {
      return await fetch(o.base + path, {
        method,
        headers: { accept: 'application/json', ...(init.json ? { 'content-type': 'application/json' } : {}), ...o.headers?.(method) },
        body: init.body,
        credentials: 'same-origin',
        cache: 'no-store',
      });
    } catch {
      throw new ApiError(0, 'server_unreachable', o.unreachable);
    }
  };

  return {
    async request<T>(method: string, path: string, call: Call = {}): Promise<T> {
      const success: readonly number[] = typeof call.success === 'number' ? [call.success] : (call.success ?? [200]);
      const body = call.raw ?? (call.body === undefined ? undefined : JSON.stringify(call.body));
      const res = await send(method, path, { body, json: body !== undefined });
      const json = jsonOf(await res.text());
      const said = typeof json?.error === 'string' && typeof json?.message === 'string';
      if (success.includes(res.status) && (res.status === 204 || (json !== undefined && !said))) return json as T;
      if (res.status === 401) o.onUnauthorized?.(path);
      // An error of the server's API: its code and message as they are.
      if (res.status >= 400 && said) throw new ApiError(res.status, json.error, json.message, json.details ?? {});
      const what = said ? ` (${json.error}: ${json.message})` : json === undefined && res.status !== 204 ? ' without JSON' : '';
      throw new ApiError(res.status, 'unexpected_answer', `${o.server} answered ${method} ${o.base}${path} with status ${res.status}${what}, not the ${listed(success)} expected: nothing was taken from it`, { status: res.status });
    },

    async download(path: string, fallbackName: string) {
      const res = await send('GET', path, { json: false });
      if (res.status !== 200) throw new ApiError(res.status, 'download_failed', `The download failed (${res.status})`);
      return { blob: await res.blob(), name: /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName };
    },
  };
}

/** What an error says to a person: the server's message as it is; `withCode` adds its code. */
export function errorText(err: unknown, o: { withCode?: boolean } = {}): string {
  if (err instanceof ApiError) return o.withCode ? `${err.message} (${err.code})` : err.message;
  return err instanceof Error ? err.message : String(err);
}
