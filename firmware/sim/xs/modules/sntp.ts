// `sntp` (modules/network/sntp/sntp.js, documentation/network/network.md "SNTP"): new SNTP({host},
// callback) asks the server and reports SNTP.time with the seconds since the epoch, or SNTP.retry
// while it tries again, and SNTP.error after its retries; it closes itself after time or error.
// The host plays the server (a board's clock is "synchronized" when the host says its server answers).
import { hostCall, newId, onEvent } from '../host.ts';

type Callback = (message: number, value?: unknown) => void;
const clients = new Map<number, { callback: Callback }>();

onEvent('sntp', (event) => {
  const client = clients.get(event.id!);
  if (!client) return;
  if (event.message !== SNTP.retry) clients.delete(event.id!);
  client.callback(event.message as number, event.value);
});

export default class SNTP {
  static readonly time = 1;
  static readonly retry = 2;
  static readonly error = -1;
  readonly #id = newId();

  constructor(dictionary: { host: string; address?: string }, callback: Callback) {
    if (typeof dictionary?.host !== 'string' && typeof dictionary?.address !== 'string') throw new Error('SNTP: host required');
    clients.set(this.#id, { callback });
    hostCall('sntp.request', { id: this.#id, host: dictionary.host ?? dictionary.address });
  }

  close(): void {
    clients.delete(this.#id);
  }
}
