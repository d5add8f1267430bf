// What the board is and what it can do to itself.

export type Role = 'controller' | 'client';
export type BuildKind = 'production' | 'debug';

export interface DeviceIdentity {
  uuid: string;
  role: Role;
  /** Controllers have Ethernet; clients are Wi-Fi only. */
  ethernetMac?: string;
  wifiMac: string;
  hardwareClass: string;
  productHex: string;
  firmwareVersion: string;
  build: BuildKind;
}

export interface OtaWriter {
  write(chunk: Uint8Array): void;
  /** Marks the new image bootable (the next reboot runs it). */
  finish(): void;
  abort(): void;
}

export interface System {
  identity(): DeviceIdentity;
  /** Never returns on a board. */
  reboot(reason: string): void;
  /** Starts writing the inactive OTA partition. */
  otaBegin(size: number): OtaWriter;
}

export interface MqttOptions {
  host: string;
  port: number;
  clientId: string;
  username?: string;
  password?: string;
  /** PEM CA certificate: TLS when present. */
  ca?: string;
}

export interface Mqtt {
  connect(options: MqttOptions): Promise<{ publish(topic: string, payload: Uint8Array): Promise<void>; close(): Promise<void> }>;
}
