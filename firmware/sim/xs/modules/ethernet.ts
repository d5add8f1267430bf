// `ethernet` (modules/network/ethernet, documentation/network/ethernet.md; W5500 on an ESP32-S3):
// Ethernet.start() brings the driver up and throws when no chip answers; a monitor receives
// "connect" / "disconnect" (link) and "gotIP" / "lostIP" (DHCP). On a virtual board the link comes
// up at once and the interface's address is its loopback address.
import { hostCall, newId, onEvent } from '../host.ts';

type Monitor = (message: string) => void;
const monitors = new Map<number, Monitor>();

onEvent('ethernet', (event) => {
  for (const monitor of [...monitors.values()]) monitor(event.message as string);
});

export default class Ethernet {
  static readonly gotIP = 'gotIP';
  static readonly lostIP = 'lostIP';
  static readonly connected = 'connect';
  static readonly disconnected = 'disconnect';
  readonly #id = newId();

  constructor(onNotify?: Monitor) {
    if (onNotify) monitors.set(this.#id, onNotify);
    hostCall('ethernet.monitor');
  }

  close(): void {
    monitors.delete(this.#id);
  }

  static start(): void {
    hostCall('ethernet.start');
  }
}
