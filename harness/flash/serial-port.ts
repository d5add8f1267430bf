// A local serial port (a USB-UART bridge of a real board, or a virtual board's pseudo-terminal) in
// the Web Serial shape esptool-js expects: the Web Serial adapter over node-serialport's transport.
import { SerialPortTransport } from '../transport/serial.ts';
import { WebSerialAdapter } from './web-serial.ts';

export class NodeSerialPort extends WebSerialAdapter {
  constructor(readonly path: string) {
    super(new SerialPortTransport(path));
  }
}
