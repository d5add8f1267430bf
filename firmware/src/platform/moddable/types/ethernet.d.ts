// What @moddable/typings 5.6.0 lacks: the Ethernet module (W5500 over SPI on an ESP32-S3). Mirrors
// modules/network/ethernet/ethernet.js and esp32/ethernet.c of the Moddable SDK (8.2.3)
// (documentation/network/ethernet.md): `start` brings the driver up (throws when no chip answers), a
// monitor instance receives "connect" / "disconnect" (link) and "gotIP" / "lostIP" (DHCP).
declare module 'ethernet' {
  export type EthernetMessage = 'start' | 'connect' | 'disconnect' | 'gotIP' | 'lostIP';

  export default class Ethernet {
    /** One argument: the notification callback (xs_ethernet_constructor calls build(onNotify)). */
    constructor(onNotify?: (message: EthernetMessage, code?: number) => void);
    close(): void;
    static start(): void;
    static useDHCP(): void;
    static useStaticIP(address: string, netmask: string, gateway: string): void;
    static readonly gotIP: 'gotIP';
    static readonly lostIP: 'lostIP';
    static readonly connected: 'connect';
    static readonly disconnected: 'disconnect';
  }
}
