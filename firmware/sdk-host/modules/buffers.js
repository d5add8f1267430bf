/*
 * Two of the SDK's Linux modules take only an ArrayBuffer where their ESP32 counterparts, which the
 * firmware is written for, take any buffer (xsmcGetBufferReadable): `file` write (files/file/lin/
 * modFile.c, against littlefs/modLittlefs.c) and `embedded:io/serial` write (io/serial/lin/serial.c,
 * against esp32/serial.c). On the virtual board a view is handed over as an ArrayBuffer of its own
 * bytes: a copy, in the chunk heap, for a view that does not span its whole buffer. This costs the
 * virtual board heap that the chip does not spend (docs/moddable-emulation.md).
 */
export function exactBuffer(data) {
	if (!ArrayBuffer.isView(data))
		return data;
	const {buffer, byteOffset, byteLength} = data;
	if ((0 === byteOffset) && (byteLength === buffer.byteLength))
		return buffer;
	return buffer.slice(byteOffset, byteOffset + byteLength);
}
