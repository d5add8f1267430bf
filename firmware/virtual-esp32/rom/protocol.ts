// The ESP32 UART bootloader's packets and codes (esptool docs, "Serial Protocol"; the stub's
// stub_flasher.h for its error codes). Requests: direction 0x00 | command | size u16 | checksum u32
// | data. Responses: direction 0x01 | command | size u16 | value u32 | data | status bytes, where the
// ROM sends 4 status bytes (status, error, 2 reserved) and the stub 2 (status, error).
import { putU16, putU32, u16, u32 } from '../../image/bytes.ts';

export const DIRECTION_REQUEST = 0x00;
export const DIRECTION_RESPONSE = 0x01;

/** Command identifiers (both loaders unless marked stub-only). */
export const CMD = {
  FLASH_BEGIN: 0x02,
  FLASH_DATA: 0x03,
  FLASH_END: 0x04,
  MEM_BEGIN: 0x05,
  MEM_END: 0x06,
  MEM_DATA: 0x07,
  SYNC: 0x08,
  WRITE_REG: 0x09,
  READ_REG: 0x0a,
  SPI_SET_PARAMS: 0x0b,
  SPI_ATTACH: 0x0d,
  CHANGE_BAUDRATE: 0x0f,
  FLASH_DEFL_BEGIN: 0x10,
  FLASH_DEFL_DATA: 0x11,
  FLASH_DEFL_END: 0x12,
  SPI_FLASH_MD5: 0x13,
  GET_SECURITY_INFO: 0x14,
  /** Stub only. */
  ERASE_FLASH: 0xd0,
  /** Stub only. */
  ERASE_REGION: 0xd1,
  /** Stub only. */
  READ_FLASH: 0xd2,
  /** Stub only: exits the loader, no response. */
  RUN_USER_CODE: 0xd3,
} as const;

/** ROM loader error values (second status byte). */
export const ROM_ERROR = {
  /** "Received message is invalid" (parameters or length field is invalid), also an unknown command. */
  INVALID_MESSAGE: 0x05,
  /** "Failed to act on received message" (e.g. a region outside the flash). */
  FAILED_TO_ACT: 0x06,
  /** "Invalid CRC in message": the data checksum does not match. */
  INVALID_CRC: 0x07,
  /** "flash write error": what was read back differs from what was written. */
  FLASH_WRITE: 0x08,
  /** "flash read error". */
  FLASH_READ: 0x09,
  /** "flash read length error". */
  FLASH_READ_LENGTH: 0x0a,
  /** "Deflate error" (compressed uploads only). */
  DEFLATE: 0x0b,
} as const;

/** Stub loader errors (stub_flasher.h, esp_command_error). */
export const STUB_ERROR = {
  BAD_DATA_LEN: 0xc0,
  BAD_DATA_CHECKSUM: 0xc1,
  BAD_BLOCKSIZE: 0xc2,
  INVALID_COMMAND: 0xc3,
  FAILED_SPI_OP: 0xc4,
  FAILED_SPI_UNLOCK: 0xc5,
  NOT_IN_FLASH_MODE: 0xc6,
  INFLATE_ERROR: 0xc7,
  NOT_ENOUGH_DATA: 0xc8,
  TOO_MUCH_DATA: 0xc9,
  CMD_NOT_IMPLEMENTED: 0xff,
} as const;

/** SYNC's payload: 07 07 12 20, then 32 × 0x55 (the ROM also measures the baud rate on it). */
export const SYNC_PAYLOAD = Uint8Array.from([0x07, 0x07, 0x12, 0x20, ...new Array(32).fill(0x55)]);

/** The stub's greeting after MEM_END starts it: the SLIP packet "OHAI" (4F 48 41 49). */
export const STUB_GREETING = Uint8Array.from([0x4f, 0x48, 0x41, 0x49]);

export interface Request {
  command: number;
  checksum: number;
  data: Uint8Array;
}

/** Parses a request packet; null for a response or a packet too short for the header. */
export function parseRequest(packet: Uint8Array): (Request & { sizeMatches: boolean }) | null {
  if (packet.length < 8 || packet[0] !== DIRECTION_REQUEST) return null;
  const size = u16(packet, 2);
  const data = packet.subarray(8);
  return { command: packet[1]!, checksum: u32(packet, 4), data, sizeMatches: size === data.length };
}

export function encodeResponse(command: number, value: number, data: Uint8Array, status: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + data.length + status.length);
  out[0] = DIRECTION_RESPONSE;
  out[1] = command;
  putU16(out, 2, data.length + status.length);
  putU32(out, 4, value);
  out.set(data, 8);
  out.set(status, 8 + data.length);
  return out;
}

/** The words of a command's data (little-endian u32s). */
export function words(data: Uint8Array, count: number): number[] {
  return Array.from({ length: count }, (_, i) => u32(data, i * 4));
}
