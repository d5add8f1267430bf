/*
 * The SDK's `embedded:io/serial` on Linux (io/serial/lin/serial.js and serial.c, unchanged) on the
 * virtual chip's UART (the loader's pseudo-terminal, config.console.device), with writes that take
 * any buffer, as on the chip (modules/buffers.js).
 */
import SdkSerial from "sdk/io/serial";
import {exactBuffer} from "fw/buffers";

export default class Serial extends SdkSerial {
	write(data) {
		return super.write(exactBuffer(data));
	}
}
