// How a virtual board's peripherals are wired to each other and to its firmware (board.ts): the radios
// report to the running firmware; the network's links follow the radios; the listeners' URLs are kept
// by the board. As a machine file connects a chip's devices before it runs.
import type { Iface } from '../src/hal/network.ts';
import type { Position } from './air.ts';
import type { SdkBoardOptions } from './board-options.ts';
import type { FirmwareProcess } from './firmware-process.ts';
import { BoardNetwork } from './network.ts';
import { Radio } from './radio.ts';

/** The interfaces' loopback addresses (DESIGN.md section 6), unless the owner says otherwise. */
const DEFAULT_HOSTS: Record<Iface, string> = { ethernet: '127.0.0.2', softap: '127.0.0.3', station: '127.0.0.4' };

/** What the wiring asks of the board. */
export interface BoardSide {
  position(): Position;
  firmware(): FirmwareProcess | undefined;
  urls: Partial<Record<Iface, string>>;
  ntpTime(): number | null;
  /** A line the host writes on the board's console. */
  hostLine(text: string): void;
}

export interface Wiring {
  addresses: { ethernet: string; ap: string; station: string };
  radio: Radio;
  network: BoardNetwork;
}

export function wireBoard(o: SdkBoardOptions, board: BoardSide): Wiring {
  const hosts = { ...DEFAULT_HOSTS, ...o.hosts };
  const addresses = { ethernet: hosts.ethernet, ap: hosts.softap, station: hosts.station };
  const radio = new Radio({
    ...(o.air ? { air: o.air } : {}),
    wifiMac: o.identity.wifiMac,
    ...(o.identity.ethernetMac ? { ethernetMac: o.identity.ethernetMac } : {}),
    stationAddress: addresses.station,
    position: () => board.position(),
    softApUrl: () => board.urls.softap,
    reports: {
      wifi: (message, reason) => board.firmware()?.emit('wifiNotify', message, reason ?? 0),
      scanResult: (ssid, bssid, rssi, channel, authentication) => board.firmware()?.emit('wifiScanResult', ssid, bssid, rssi, channel, authentication),
      scanDone: () => board.firmware()?.emit('wifiScanDone'),
      ethernet: (message) => board.firmware()?.emit('ethernetNotify', message),
    },
  });
  const network = new BoardNetwork({
    addresses,
    ...(o.listenerPorts ? { ports: o.listenerPorts } : {}),
    link: () => ({
      ethernet: radio.ethernetUp,
      ap: radio.ap !== null,
      station: radio.association ? { apAddress: radio.association.gateway.split(':')[0]!, infrastructure: radio.association.infrastructure } : null,
    }),
    isSoftApAddress: (address) => o.air?.isSoftApAddress(address) ?? false,
    ntpTime: () => board.ntpTime(),
    onListening: (iface, url) => {
      if (url === undefined) {
        delete board.urls[iface];
        return;
      }
      board.urls[iface] = url;
      // Port 80 is a loopback listener on another port here: said on the console before the
      // firmware's own "listening on <address>:80" line, for a console reader (harness/serial-board.ts).
      board.hostLine(`${iface}: listening on ${url.replace(/^http:\/\//, '')}`);
    },
  });
  return { addresses, radio, network };
}
