// What @moddable/typings 5.6.0's `http` lacks: Server.detach (modules/network/http/http.js;
// documentation/network/network.md, "detach(connection)"), and the TCP socket it hands over
// (modules/network/socket/socket.js over lwip/modSocket.c). The socket's callback receives
// 2 (readable: bytes available), 3 (writable: bytes that may be written), -1 (disconnected),
// -2 (error). `read(String, "\n")` reads up to and including a terminator; `write()` with no argument
// answers the free space, and a write larger than that throws, so callers ask first.
import type {} from 'http';

declare module 'http' {
  interface DetachedSocket {
    read(): number;
    read(type: typeof ArrayBuffer, count?: number): ArrayBuffer;
    read(type: typeof String, until?: number | string): string;
    read(type: null, count: number | string): number;
    write(): number;
    write(...data: (string | ArrayBuffer | Uint8Array)[]): void;
    /** "REMOTE_IP": the peer's address (xs_socket_get). */
    get(what: 'REMOTE_IP'): string | undefined;
    close(): void;
    callback: ((message: number, value?: number) => void) | undefined;
  }

  interface Server {
    /** Removes a connection from the server and returns its socket; the server forgets it. */
    detach(connection: Request): DetachedSocket;
  }
}
