// What the board's HTTP code needs of a TCP stream: Moddable's socket (modules/network/socket/
// socket.js over lwip/modSocket.c), one a listener accepted (http-server.ts), or the TLS stream over
// one (tls-stream.ts). @moddable/typings 5.6.0 types the socket more narrowly
// than modSocket.c behaves; this is modSocket.c's behaviour:
// - `read()` answers how many bytes can be read now (on lwIP: what is left of the pbuf being read;
//   the next pbuf comes with the next "readable" report once this one is read whole).
// - `read(ArrayBuffer, n)`, `read(ArrayBuffer | String, "\n")` (up to and including the terminator, or
//   what there is: modSocket.c finds it with strchr, which stops at a NUL byte), `read(null, n)` (skips). What is not read stays in lwIP, and the TCP window stays closed by
//   that much: a reader that stops reading stops its sender (TCP's flow control).
// - `write()` answers the free room (tcp_sndbuf); a larger write throws, so callers ask first.
// - The callback gets 1 connected, 2 readable (bytes), 3 writable (bytes), -1 disconnected, -2 error.
//   lwIP reports the peer's FIN only once everything before it has been read.

export const SOCKET_CONNECTED = 1;
export const SOCKET_READABLE = 2;
export const SOCKET_WRITABLE = 3;

export interface StreamSocket {
  read(): number;
  read(type: typeof ArrayBuffer, until?: number | string): ArrayBuffer;
  read(type: typeof String, until?: number | string): string;
  read(type: null, count: number | string): number;
  write(): number;
  write(...data: (string | ArrayBuffer | Uint8Array)[]): void;
  close(): void;
  callback: ((message: number, value?: number) => void) | undefined;
}
