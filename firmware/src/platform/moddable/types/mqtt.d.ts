// What @moddable/typings 5.6.0 lacks: the classic `mqtt` client (the package types only "mqtt/js"
// and the ECMA-419 client). Mirrors modules/network/mqtt/mqtt.js of the Moddable SDK (8.2.3):
// QoS 0 only; `timeout` is the keep-alive in milliseconds; a `Socket` (e.g. SecureSocket) with its
// `secure` dictionary makes it TLS; `publish` throws "connection closed" before onReady.
declare module 'mqtt' {
  export interface MqttClientOptions {
    host: string;
    port?: number;
    id?: string;
    user?: string;
    password?: string;
    timeout?: number;
    /** The last will (`message` an ArrayBuffer or a string; `retain` sets the will's retain flag). */
    will?: { topic: string; message: ArrayBuffer | string; retain?: boolean; quality?: number };
    Socket?: unknown;
    secure?: { certificate?: ArrayBuffer; protocolVersion?: number; verify?: boolean };
  }

  export default class Client {
    constructor(options: MqttClientOptions);
    onReady?: () => void;
    onClose?: () => void;
    onMessage?: (topic: string, payload: ArrayBuffer) => void;
    publish(topic: string, data: ArrayBuffer | string, flags?: { retain?: boolean }): void;
    close(): void;
  }
}
