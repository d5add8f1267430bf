// A serial port on an RFC 2217 access server (ser2net, esp_rfc2217_server, a virtual board's console
// port) in the Web Serial shape esptool-js expects: the Web Serial adapter over our RFC 2217 client.
import { Rfc2217Transport } from '../transport/rfc2217.ts';
import { WebSerialAdapter } from './web-serial.ts';

export class Rfc2217Port extends WebSerialAdapter {
  constructor(readonly url: string) {
    super(new Rfc2217Transport(url));
  }
}
