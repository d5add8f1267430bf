// The firmware's entry on an ESP32-S3 (the manifest's creation.main): starts the board
// (hal/start.ts), and on a virtual board, the same app built by the SDK for Linux (firmware/sdk-host/).
import { installAbortHook } from './hal/abort-hook.ts';
import { errorText, startBoard } from './hal/start.ts';

installAbortHook(); // first: a crash at any later point is kept for the next boot's report
try {
  startBoard();
} catch (err) {
  trace(`firmware: ${errorText(err)}\n`); // a bad build configuration: there is no console yet
}
