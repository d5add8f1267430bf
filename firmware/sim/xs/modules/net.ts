// `net` (modules/network/net, documentation/network/network.md "Net"): Net.get(property, interface)
// answers what the ESP32 network stack knows: "IP" of "ethernet", "ap" or "station"
// (modules/network/net/esp/modNet.c), "MAC", "SSID", "BSSID", "RSSI". An interface without an
// address answers undefined. On a virtual board each interface's address is a loopback address.
import { hostCall } from '../host.ts';

const Net = {
  get(property: string, iface?: string): string | number | undefined {
    const value = hostCall('net.get', { property, iface: iface ?? null }).value as string | number | null;
    return value ?? undefined;
  },
  resolve(host: string, callback: (name: string, address?: string) => void): void {
    // Virtual boards reach loopback only: names are not resolved (docs/moddable-emulation.md).
    callback(host, /^\d+\.\d+\.\d+\.\d+$/.test(host) ? host : host === 'localhost' ? '127.0.0.1' : undefined);
  },
};

export default Net;
