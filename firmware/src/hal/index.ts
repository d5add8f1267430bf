// The hardware abstraction the portable core is written against (DESIGN.md section 2). One narrow
// interface per kind of hardware; a platform (moddable, memory) fills each in.
import type { Clock, Timers } from './clock.ts';
import type { CryptoHal } from './crypto.ts';
import type { Fuse } from './fuse.ts';
import type { Network } from './network.ts';
import type { Display, EventLog, SerialConsole } from './output.ts';
import type { Radio } from './radio.ts';
import type { Storage } from './storage.ts';
import type { Mqtt, System } from './system.ts';

export interface Hal {
  storage: Storage;
  clock: Clock;
  timers: Timers;
  fuse: Fuse;
  crypto: CryptoHal;
  network: Network;
  radio: Radio;
  display: Display;
  eventLog: EventLog;
  console: SerialConsole;
  system: System;
  mqtt: Mqtt;
}

export type * from './clock.ts';
export type * from './crypto.ts';
export type * from './fuse.ts';
export type * from './network.ts';
export type * from './output.ts';
export type * from './radio.ts';
export type * from './storage.ts';
export type * from './system.ts';
