// A board answers 503 with Retry-After when it holds as many requests as it can (board_busy: its
// request memory or its connections are full, docs/board-http-limits.md) or while it restarts. A board
// that asks another (a provisioning target or client asking its source) waits as long as it says and
// asks again, a few times, instead of giving up at the first answer.
import type { Hal } from '../../hal/index.ts';
import type { ClientRequest, ClientResponse } from '../../hal/network.ts';
import { drain } from '../body.ts';
import { delay } from '../delay.ts';

/** Asks at most this many times. */
export const BUSY_ATTEMPTS = 5;
/** Waits at most this long between two tries, whatever Retry-After says. */
const MAX_WAIT_SECONDS = 5;

/** `request`, again after Retry-After while the answer is 503 with one (a body read from a reader is sent once). */
export async function requestUnlessBusy(hal: Pick<Hal, 'network' | 'timers'>, request: ClientRequest): Promise<ClientResponse> {
  const resendable = request.body === undefined || request.body instanceof Uint8Array;
  for (let attempt = 1; ; attempt++) {
    const res = await hal.network.request(request);
    const after = res.headers['retry-after'];
    if (res.status !== 503 || after === undefined || !resendable || attempt >= BUSY_ATTEMPTS) return res;
    await drain(res.body);
    await delay(hal, Math.min(MAX_WAIT_SECONDS, Math.max(1, Number(after) || 1)) * 1000);
  }
}
