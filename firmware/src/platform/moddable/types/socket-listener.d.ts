// What @moddable/typings 5.6.0's `socket` lacks of the Listener (modules/network/socket/socket.js:
// Listener.prototype.close, xs_listener_close in lwip/modSocket.c), used by the board's listeners
// (hal/http-server.ts).
import type {} from 'socket';

declare module 'socket' {
  interface Listener {
    close(): void;
  }
}
