// `fleet device enroll [uuid] --public-key <file|-> | --from-port <port>`: enrolls a board's identity
// key as the board gives it. The key may be a PEM (SPKI), or the console's answer to `pubkey` as it
// is (`OK {"uuid": …, "public_key_pem": …}`, docs/serial-console.md), so that
//   fleet console --port /dev/ttyUSB0 pubkey | fleet device enroll --public-key -
// needs no hand work; the UUID is then taken from the answer. `--from-port` asks the board itself.
import { Option, type Command } from 'commander';
import { readFileArgument } from '../../cloud/file-errors.ts';
import { path } from '../client.ts';
import { baudOption, seconds } from './port-options.ts';
import { EXIT_CODES } from '../../cloud/exit-codes.ts';
import { topic, type CommandContext } from './context.ts';

/** A key that cannot be enrolled as given (not a key, another board's, no UUID): a usage error, exit 2. */
export class EnrollInputError extends Error {
  override name = 'EnrollInputError';
  readonly exitCode = EXIT_CODES.usage;
}

export interface EnrollmentKey {
  publicKeyPem: string;
  /** The board's UUID when the input names it (the console's answer). */
  uuid?: string;
}

const PEM = /-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/;

/** The key in a PEM file or in the console's `pubkey` answer (with or without its `OK `). */
export function parseEnrollmentKey(text: string, source: string): EnrollmentKey {
  const trimmed = text.trim();
  if (trimmed === '') throw new EnrollInputError(`${source} is empty: give a PEM public key, or the console's answer to pubkey (fleet console --port … pubkey)`);
  const err = /^ERR .*$/m.exec(trimmed);
  if (err) throw new EnrollInputError(`${source} holds the board's refusal, not a key: ${err[0]}`);
  const answer = /^(?:OK )?(\{.*\})\s*$/m.exec(trimmed);
  if (answer) {
    let json: { uuid?: unknown; public_key_pem?: unknown };
    try {
      json = JSON.parse(answer[1]!) as typeof json;
    } catch {
      throw new EnrollInputError(`${source}: the console's answer is not JSON: ${answer[0].slice(0, 80)}`);
    }
    if (typeof json.public_key_pem !== 'string' || !PEM.test(json.public_key_pem)) {
      throw new EnrollInputError(`${source}: the answer has no public_key_pem; is it the answer to pubkey (not status)?`);
    }
    return { publicKeyPem: PEM.exec(json.public_key_pem)![0] + '\n', ...(typeof json.uuid === 'string' && json.uuid ? { uuid: json.uuid } : {}) };
  }
  const pem = PEM.exec(trimmed);
  if (pem) return { publicKeyPem: pem[0] + '\n' };
  throw new EnrollInputError(`${source} is neither a PEM public key (-----BEGIN PUBLIC KEY-----) nor the console's answer to pubkey (OK {…})`);
}

/** The UUID to enroll: the one given, the board's, and they must agree. */
export function enrollmentUuid(given: string | undefined, key: EnrollmentKey, source: string): string {
  if (given && key.uuid && given !== key.uuid) {
    throw new EnrollInputError(`the key in ${source} is board ${key.uuid}'s, not ${given}'s: enroll it as ${key.uuid}, or leave the UUID out`);
  }
  const uuid = given ?? key.uuid;
  if (!uuid) throw new EnrollInputError(`a bare PEM names no device: give its UUID (fleet device enroll <uuid> --public-key ${source === 'standard input' ? '-' : source})`);
  return uuid;
}

/** All of standard input, as a stream: a pipe whose writer has not written yet is waited for, not EAGAIN. */
async function readStandardInput(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function keyFromBoard(port: string, baud: number, timeoutS: number): Promise<string> {
  const { openConsole, ConsoleCommandError, CONSOLE_EXIT } = await import('./console.ts');
  const console = await openConsole(port, baud);
  try {
    const answer = await console.command('pubkey', timeoutS * 1000).catch((err: Error) => {
      throw new ConsoleCommandError(`no answer to pubkey on ${port} within ${timeoutS} s (${err.message})`, CONSOLE_EXIT.no_answer);
    });
    if (answer.startsWith('ERR ')) throw new ConsoleCommandError(`the board on ${port} answered pubkey with ${answer}`, CONSOLE_EXIT.err);
    return answer;
  } finally {
    await console.close();
  }
}

export function enrollCommand(program: Command, { client, print }: CommandContext): void {
  const device = topic(program, 'device');
  device
    .command('enroll')
    .description("Enroll a device with its ECDSA P-256 public key: a PEM (SPKI), the console's answer to pubkey as it is (the UUID is then taken from it), or asked of the board on a port")
    .argument('[uuid]', "the device's UUID (default: the one in the console's answer)")
    .addOption(new Option('--public-key <file>', "PEM file or the console's pubkey answer; - reads standard input").conflicts('fromPort'))
    .addOption(new Option('--from-port <port>', "ask the board on this serial port or rfc2217://host:port for its key (console command pubkey)").conflicts('publicKey'))
    .option('--baud <rate>', 'console baud rate for --from-port', baudOption, 115_200)
    .option('--timeout <seconds>', 'how long --from-port waits for the answer', seconds, 30)
    .option('--label <text>', 'a note for people (where the device is, what it drives)')
    .addHelpText('after', '\nExamples:\n  fleet console --port /dev/ttyUSB0 pubkey | fleet device enroll --public-key -\n  fleet device enroll --from-port /dev/ttyUSB0\n  fleet device enroll 3f2a-0001 --public-key device.pem')
    .action(async (given: string | undefined, o: { publicKey?: string; fromPort?: string; baud: number; timeout: number; label?: string }) => {
      if (!o.publicKey && !o.fromPort) throw new EnrollInputError('give the key: --public-key <file|->, or --from-port <port> to ask the board');
      let source: string;
      let text: string;
      if (o.fromPort) {
        source = `the answer of the board on ${o.fromPort}`;
        text = await keyFromBoard(o.fromPort, o.baud, o.timeout);
      } else {
        const stdin = o.publicKey === '-';
        source = stdin ? 'standard input' : o.publicKey!;
        if (stdin && process.stdin.isTTY) process.stderr.write('enroll: reading the key from standard input (end with Ctrl-D)\n');
        text = stdin ? await readStandardInput() : readFileArgument(o.publicKey!).toString('utf8');
      }
      const key = parseEnrollmentKey(text, source);
      const uuid = enrollmentUuid(given, key, source);
      print((await client().request('PUT', path('admin', 'devices', uuid), { public_key: key.publicKeyPem, ...(o.label !== undefined ? { label: o.label } : {}) })).body);
    });
}
