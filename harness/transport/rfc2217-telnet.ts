// Telnet framing (RFC 854, RFC 855 for option negotiation) with the COM-PORT-OPTION of RFC 2217,
// shared by the virtual board's RFC 2217 server and the harness's RFC 2217 client. In the data
// stream 0xFF (IAC) is doubled; commands are IAC <WILL|WONT|DO|DONT> <option> and
// IAC SB <option> <payload> IAC SE.

/** Interpret As Command. */
export const IAC = 0xff;
export const DONT = 0xfe;
export const DO = 0xfd;
export const WONT = 0xfc;
export const WILL = 0xfb;
/** Subnegotiation begin / end. */
export const SB = 0xfa;
export const SE = 0xf0;

/** Telnet options used here. */
export const OPT = {
  /** RFC 856: 8-bit data both ways. */
  BINARY: 0,
  ECHO: 1,
  /** RFC 858: suppress go-ahead. */
  SGA: 3,
  /** RFC 2217. */
  COM_PORT: 44,
} as const;

/** RFC 2217 commands, client to server; the server answers with the same command + 100. */
export const COM = {
  SIGNATURE: 0,
  SET_BAUDRATE: 1,
  SET_DATASIZE: 2,
  SET_PARITY: 3,
  SET_STOPSIZE: 4,
  SET_CONTROL: 5,
  NOTIFY_LINESTATE: 6,
  NOTIFY_MODEMSTATE: 7,
  FLOWCONTROL_SUSPEND: 8,
  FLOWCONTROL_RESUME: 9,
  SET_LINESTATE_MASK: 10,
  SET_MODEMSTATE_MASK: 11,
  PURGE_DATA: 12,
} as const;
export const SERVER_REPLY_OFFSET = 100;

/** SET-CONTROL values (RFC 2217): the ones that drive DTR and RTS. */
export const CONTROL = {
  DTR_ON: 8,
  DTR_OFF: 9,
  RTS_ON: 11,
  RTS_OFF: 12,
} as const;

/** PURGE-DATA values. */
export const PURGE = { RECEIVE: 1, TRANSMIT: 2, BOTH: 3 } as const;

export type TelnetEvent = { kind: 'data'; bytes: Uint8Array } | { kind: 'negotiate'; verb: number; option: number } | { kind: 'sub'; option: number; payload: Uint8Array };

/** Splits a telnet stream into data and commands; keeps state across chunks. */
export class TelnetParser {
  private state: 'data' | 'iac' | 'verb' | 'sb' | 'sb-iac' = 'data';
  private verb = 0;
  private sub: number[] = [];

  constructor(private readonly onEvent: (e: TelnetEvent) => void) {}

  push(chunk: Uint8Array): void {
    let data: number[] = [];
    const flush = () => {
      if (data.length > 0) this.onEvent({ kind: 'data', bytes: Uint8Array.from(data) });
      data = [];
    };
    for (const b of chunk) {
      switch (this.state) {
        case 'data':
          if (b === IAC) this.state = 'iac';
          else data.push(b);
          break;
        case 'iac':
          if (b === IAC) {
            data.push(IAC);
            this.state = 'data';
          } else if (b === WILL || b === WONT || b === DO || b === DONT) {
            this.verb = b;
            this.state = 'verb';
          } else if (b === SB) {
            this.sub = [];
            this.state = 'sb';
          } else this.state = 'data'; // NOP, GA and the other two-byte commands carry nothing for a serial line
          break;
        case 'verb':
          flush();
          this.onEvent({ kind: 'negotiate', verb: this.verb, option: b });
          this.state = 'data';
          break;
        case 'sb':
          if (b === IAC) this.state = 'sb-iac';
          else this.sub.push(b);
          break;
        case 'sb-iac':
          if (b === IAC) {
            this.sub.push(IAC);
            this.state = 'sb';
          } else {
            // IAC SE ends it (anything else after IAC ends it too: a malformed subnegotiation).
            flush();
            const [option = -1, ...payload] = this.sub;
            this.onEvent({ kind: 'sub', option, payload: Uint8Array.from(payload) });
            this.state = 'data';
          }
          break;
      }
    }
    flush();
  }
}

/** Data for the wire: every 0xFF doubled. */
export function escapeData(bytes: Uint8Array): Uint8Array {
  let n = 0;
  for (const b of bytes) if (b === IAC) n++;
  if (n === 0) return bytes;
  const out = new Uint8Array(bytes.length + n);
  let at = 0;
  for (const b of bytes) {
    out[at++] = b;
    if (b === IAC) out[at++] = IAC;
  }
  return out;
}

export function negotiate(verb: number, option: number): Uint8Array {
  return Uint8Array.from([IAC, verb, option]);
}

/** IAC SB COM-PORT-OPTION <command> <value…> IAC SE. */
export function comPortCommand(command: number, value: Uint8Array): Uint8Array {
  return Uint8Array.from([IAC, SB, OPT.COM_PORT, command, ...escapeData(value), IAC, SE]);
}

export function u32be(value: number): Uint8Array {
  return Uint8Array.from([(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff]);
}
