// Which address each interface has right now. The radio (SoftAP up, station got an IP) and the
// Ethernet monitor write here; the listeners (network.ts) and SNTP (clock.ts) react. One object
// handed to each, never a global, so that an emulation of these modules can run several boards.
import Ethernet from 'ethernet';
import Net from 'net';
import type { Iface } from '../../../hal/network.ts';

/**
 * Net.get with its interface argument: modules/network/net/esp/modNet.c takes "ethernet", "ap" or
 * "station" as the second argument (@moddable/typings 5.6.0 declares only the first).
 */
export function interfaceAddress(iface: 'ethernet' | 'ap' | 'station'): string | undefined {
  const get = Net.get as unknown as (what: 'IP', iface: string) => string | undefined;
  const address = get('IP', iface);
  return address && address !== '0.0.0.0' ? address : undefined;
}

export type AddressChange = (iface: Iface, address: string | undefined) => void;

export class InterfaceAddresses {
  private readonly addresses = new Map<Iface, string>();
  private readonly listeners: AddressChange[] = [];

  get(iface: Iface): string | undefined {
    return this.addresses.get(iface);
  }

  set(iface: Iface, address: string | undefined): void {
    if (this.addresses.get(iface) === address) return;
    if (address === undefined) this.addresses.delete(iface);
    else this.addresses.set(iface, address);
    for (const listener of this.listeners) listener(iface, address);
  }

  onChange(listener: AddressChange): void {
    this.listeners.push(listener);
  }
}

/**
 * Starts the W5500 (modules/network/ethernet, manifest.json_w5500: SPI pins and the interrupt pin in
 * the manifest's defines.ethernet) and follows its link and DHCP lease. Returns the monitor, or
 * undefined when no chip answers (Ethernet.start throws): the board then runs on Wi-Fi alone.
 */
export function startEthernet(addresses: InterfaceAddresses, log: (message: string) => void): Ethernet | undefined {
  try {
    Ethernet.start();
  } catch (err) {
    log(`Ethernet: no W5500 (${err instanceof Error ? err.message : String(err)})`);
    return undefined;
  }
  return new Ethernet((message) => {
    if (message === Ethernet.gotIP) {
      addresses.set('ethernet', interfaceAddress('ethernet'));
      log(`Ethernet: ${addresses.get('ethernet') ?? 'no address'}`);
    } else if (message === Ethernet.lostIP || message === Ethernet.disconnected) {
      addresses.set('ethernet', undefined);
      log(`Ethernet: ${message}`);
    }
  });
}
