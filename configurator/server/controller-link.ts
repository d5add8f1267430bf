// How the configurator's server talks to one controller's device-local API (spec 4.2; DESIGN.md
// section 5): one request at a time per call, a time-out on every request, answers read up to a
// limit and never further, and every failure turned into an error the page can show: the
// controller down (refused, reset), slow (time-out), answering something that is not its API, or
// answering with its own error (relayed with its code and message), or answering outside its API's
// contract (device-answers.ts: a status the route does not answer, an error its catalog does not
// have, a success without what the route answers), which is never taken for a success.
// docs/configurator-controller-access.md.
import { deviceErrorStatuses, type AnswerShape } from './device-answers.ts';
import { ConfiguratorError, ControllerAnswerError } from './errors.ts';

export interface DeviceAnswer {
  status: number;
  headers: Headers;
  bytes: Buffer;
  /** The parsed JSON body, when the body is JSON. */
  json: any;
}

export interface LinkOptions {
  /** Per request; a controller that takes longer is shown as not answering in time. */
  timeoutMs: number;
  /** The largest JSON answer read (a record, a status, the event log). */
  maxJsonBytes: number;
}

export const LINK_DEFAULTS: LinkOptions = { timeoutMs: 8_000, maxJsonBytes: 64 * 1024 };

export interface DeviceRequest {
  token?: string;
  body?: string;
  contentType?: string;
  /** Read at most this many bytes of the answer (default maxJsonBytes). */
  maxBytes?: number;
  /** A longer time-out for a request that moves a whole backup. */
  timeoutMs?: number;
  /** What a 200 or 201 answer carries (JSON); not checked when absent (no body, or the caller reads the bytes). */
  answer?: AnswerShape;
}

/** "200", "200 or 201": the statuses a route answers, for a message. */
const statusList = (ok: readonly number[]) => ok.join(' or ').replace(/ or (?=.* or )/g, ', ');

async function readLimited(res: Response, limit: number, what: string): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await res.body?.cancel().catch(() => undefined);
    throw new ConfiguratorError('controller_bad_answer', `${what} answered ${declared} bytes, more than the ${limit} expected`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  if (res.body) {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > limit) {
        await res.body.cancel().catch(() => undefined);
        throw new ConfiguratorError('controller_bad_answer', `${what} answered more than the ${limit} bytes expected`);
      }
      chunks.push(Buffer.from(chunk));
    }
  }
  return Buffer.concat(chunks);
}

function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  switch (cause?.code) {
    case 'ECONNREFUSED':
      return 'connection refused (is it powered and on this network?)';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'the connection was reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'no route to it';
    case 'ENOTFOUND':
      return 'its host name is not known';
    default:
      return cause?.message ?? (err instanceof Error ? err.message : String(err));
  }
}

export class ControllerLink {
  constructor(
    /** The controller's name in messages. */
    readonly name: string,
    /** http://host:port of its device-local API. */
    readonly address: string,
    private readonly o: LinkOptions = LINK_DEFAULTS,
  ) {}

  /** One request; throws ConfiguratorError when the controller cannot be reached or misbehaves. */
  async request(method: string, path: string, r: DeviceRequest = {}): Promise<DeviceAnswer> {
    const what = `${this.name} (${this.address})`;
    const timeoutMs = r.timeoutMs ?? this.o.timeoutMs;
    const headers: Record<string, string> = {};
    if (r.token !== undefined) headers['visual-token'] = r.token;
    if (r.body !== undefined) headers['content-type'] = r.contentType ?? 'application/json';
    let res: Response;
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      res = await fetch(this.address + path, { method, headers, body: r.body, redirect: 'error', signal });
    } catch (err) {
      if (signal.aborted) throw new ConfiguratorError('controller_timeout', `${what} did not answer within ${timeoutMs / 1000} s`);
      throw new ConfiguratorError('controller_unreachable', `${what} did not answer: ${networkReason(err)}`);
    }
    let bytes: Buffer;
    try {
      bytes = await readLimited(res, r.maxBytes ?? this.o.maxJsonBytes, what);
    } catch (err) {
      if (err instanceof ConfiguratorError) throw err;
      if (signal.aborted) throw new ConfiguratorError('controller_timeout', `${what} did not finish its answer within ${timeoutMs / 1000} s`);
      throw new ConfiguratorError('controller_unreachable', `${what} broke off its answer: ${networkReason(err)}`);
    }
    let json: unknown;
    if ((res.headers.get('content-type') ?? '').includes('json') && bytes.length > 0) {
      try {
        json = JSON.parse(bytes.toString('utf8'));
      } catch {
        json = undefined;
      }
    }
    return { status: res.status, headers: res.headers, bytes, json };
  }

  /** One request, its answer judged (`judge`). */
  async expect(method: string, path: string, ok: number[], r: DeviceRequest = {}): Promise<DeviceAnswer> {
    return this.judge(method, path, ok, await this.request(method, path, r), r.answer);
  }

  /**
   * The answer when its status is one of `ok` (the statuses the route answers that the caller
   * takes) and, for a 200 or 201, it carries `shape`; otherwise the error `refusal` makes of it.
   */
  judge(method: string, path: string, ok: readonly number[], a: DeviceAnswer, shape?: AnswerShape): DeviceAnswer {
    if (!ok.includes(a.status)) throw this.refusal(method, path, a, ok);
    if (shape && (a.status === 200 || a.status === 201) && !shape.test(a.json)) {
      throw new ConfiguratorError('controller_bad_answer', `${this.name} answered ${method} ${path} with status ${a.status} but not ${shape.what}`, { controller_status: a.status });
    }
    return a;
  }

  /**
   * The error for an answer the caller does not take. An error of the device's API (an error
   * status, and a code its catalog gives that status) is relayed with its status, code and message
   * (a 5xx as 502: the controller's failure, not the page's). Anything else (a success status the
   * route does not answer, such as a 201 or a 299 even with an error body; an error the catalog
   * does not have) is a 502 controller_bad_answer naming what the controller sent.
   */
  refusal(method: string, path: string, a: DeviceAnswer, ok: readonly number[]): Error {
    const body = (a.json ?? {}) as { error?: unknown; message?: unknown; details?: unknown };
    const said = typeof body.error === 'string' && typeof body.message === 'string' ? { error: body.error, message: body.message } : null;
    const answered = `${this.name} answered ${method} ${path} with status ${a.status}`;
    const withError = said ? ` and the error ${JSON.stringify(said.error.slice(0, 64))} (${said.message.slice(0, 200)})` : '';
    if (a.status < 400) {
      return new ConfiguratorError('controller_bad_answer', `${answered}${withError}; its API answers ${statusList(ok)} there`, { controller_status: a.status, expected_statuses: [...ok] });
    }
    if (!said) return new ConfiguratorError('controller_bad_answer', `${answered} and no error of its API`, { controller_status: a.status });
    const catalog = deviceErrorStatuses(said.error);
    if (!catalog?.includes(a.status)) {
      const why = catalog ? `which its API answers with ${statusList(catalog)}` : 'which is not an error of its API';
      return new ConfiguratorError('controller_bad_answer', `${answered}${withError}, ${why}`, { controller_status: a.status, controller_error: said.error.slice(0, 64) });
    }
    const details = { controller_status: a.status, ...(typeof body.details === 'object' && body.details !== null ? (body.details as Record<string, unknown>) : {}) };
    const retryAfter = a.headers.get('retry-after');
    if (retryAfter !== null) (details as Record<string, unknown>).retry_after_seconds ??= Number(retryAfter);
    const status = a.status >= 500 ? 502 : a.status;
    return new ControllerAnswerError(status, said.error, `${this.name}: ${said.message}`, details);
  }
}
