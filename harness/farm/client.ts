// A session with a labgrid coordinator over its gRPC protocol (@grpc/grpc-js, the service generated
// from labgrid's .proto: labgrid/descriptor.json, labgrid/messages.ts). The session is the HTTP/2
// connection: AcquirePlace and CreateReservation must go over the channel whose ClientStream sent
// `startup` (../shared/labgrid/SNAPSHOT.md), so one Coordinator owns one channel and its stream.
// Streams are closed with cancel(): after end() the coordinator keeps the peer registered.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { FarmError } from './errors.ts';
import type { ClientInMessage, ClientOutMessage, CoordinatorClient, Place, Resource } from './labgrid/messages.ts';

const descriptor = JSON.parse(readFileSync(new URL('./labgrid/descriptor.json', import.meta.url), 'utf8'));
/** keepCase: the .proto's names (acquired_resources); longs as numbers (ports, rates, times); oneofs named in `kind`. */
const definition = protoLoader.fromJSON(descriptor, { keepCase: true, longs: Number, enums: Number, defaults: false, oneofs: true });
const Service = (grpc.loadPackageDefinition(definition) as any).labgrid.Coordinator as new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ChannelOptions) => CoordinatorClient;

/**
 * The coordinator accepts keepalive pings at most every 5 s (its min_ping_interval_without_data_ms).
 * It knows a session by its peer address, and grpc-js shares one connection among the channels of a
 * process to the same address: a second session in one process (an exporter's watch beside its
 * registration check, a test's beside a job's) would be the first one's peer, and the coordinator
 * fails its ClientStream (`assert peer not in self.clients`). A local subchannel pool gives every
 * channel its own connection.
 */
const CHANNEL_OPTIONS: grpc.ChannelOptions = { 'grpc.keepalive_time_ms': 10_000, 'grpc.keepalive_timeout_ms': 10_000, 'grpc.keepalive_permit_without_calls': 1, 'grpc.use_local_subchannel_pool': 1 };
export const CONNECT_TIMEOUT_MS = 5_000;
/** The coordinator waits up to 10 s for an exporter in AcquirePlace: a shorter deadline could leave a place acquired without its resources. */
export const CALL_TIMEOUT_MS = 30_000;

/** `host:port`, as labgrid's -x takes it; refused with the value. */
export function coordinatorAddress(value: string): string {
  if (!/^[A-Za-z0-9.-]+:\d{1,5}$/.test(value) && !/^\[[0-9a-fA-F:]+\]:\d{1,5}$/.test(value)) throw new FarmError('unreachable', `the coordinator's address must be host:port, got "${value}"`);
  return value;
}

/** A name as labgrid-client gives its session: host/user (who holds a place). */
export function sessionName(user = process.env.LG_USERNAME ?? process.env.USER ?? 'fleet'): string {
  return `${process.env.LG_HOSTNAME ?? hostname()}/${user}`;
}

export const FLEET_VERSION = `fleet ${(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version}`;

/** A resource's key as place matches see it: exporter/group/cls/name. */
export function resourceKey(r: Resource): string {
  return `${r.path?.exporter_name}/${r.path?.group_name}/${r.cls}/${r.path?.resource_name}`;
}

function unreachable(address: string, why: string): FarmError {
  return new FarmError('unreachable', `cannot reach the labgrid coordinator at ${address}: ${why} (is it running, and is this its address?)`);
}

/** One channel to the coordinator, with unary calls that carry a deadline and a readable error. */
export class CoordinatorChannel {
  readonly client: CoordinatorClient;

  protected constructor(readonly address: string) {
    this.client = new Service(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  }

  static async open(address: string): Promise<CoordinatorChannel> {
    const c = new CoordinatorChannel(coordinatorAddress(address));
    await c.ready();
    return c;
  }

  protected async ready(): Promise<void> {
    await new Promise<void>((resolve, reject) =>
      (this.client as unknown as grpc.Client).waitForReady(Date.now() + CONNECT_TIMEOUT_MS, (err) => (err ? reject(unreachable(this.address, `no connection within ${CONNECT_TIMEOUT_MS / 1000} s`)) : resolve())),
    ).catch((err) => {
      this.client.close();
      throw err;
    });
  }

  /** A unary call; UNAVAILABLE is an unreachable coordinator, any other status a refusal with its details. */
  call<K extends keyof CoordinatorClient>(method: K, request: Parameters<CoordinatorClient[K]>[0], timeoutMs = CALL_TIMEOUT_MS): Promise<any> {
    return new Promise((resolve, reject) => {
      const fn = this.client[method] as unknown as (req: unknown, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: unknown) => void) => void;
      fn.call(this.client, request, { deadline: Date.now() + timeoutMs }, (err, res) => {
        if (!err) return resolve(res ?? {});
        if (err.code === grpc.status.UNAVAILABLE) return reject(unreachable(this.address, err.details || 'unavailable'));
        if (err.code === grpc.status.DEADLINE_EXCEEDED) return reject(new FarmError('unreachable', `the labgrid coordinator at ${this.address} did not answer ${method} within ${timeoutMs / 1000} s`));
        reject(new FarmError('refused', `the coordinator refused ${method}: ${err.details}`));
      });
    });
  }

  async places(): Promise<Place[]> {
    return ((await this.call('GetPlaces', {})).places ?? []) as Place[];
  }

  close(): void {
    this.client.close();
  }
}

/**
 * A client session (ClientStream with `startup`): needed to acquire places and create reservations.
 * It follows the places and resources the coordinator publishes.
 */
export class ClientSession extends CoordinatorChannel {
  readonly placesByName = new Map<string, Place>();
  readonly resources = new Map<string, Resource>();
  /** Called with each place as the coordinator pushes it, in the coordinator's order. */
  readonly onPlace = new Set<(place: Place) => void>();
  private stream: grpc.ClientDuplexStream<ClientInMessage, ClientOutMessage> | undefined;
  private syncs = new Map<number, () => void>();
  private nextSync = 1;
  private ended: string | undefined;

  private constructor(
    address: string,
    readonly name: string,
  ) {
    super(address);
  }

  static async start(address: string, name = sessionName()): Promise<ClientSession> {
    const s = new ClientSession(coordinatorAddress(address), name);
    await s.ready();
    const stream = s.client.ClientStream();
    s.stream = stream;
    stream.on('data', (m: ClientOutMessage) => s.receive(m));
    stream.on('error', (e: grpc.ServiceError) => (s.ended = e.code === grpc.status.CANCELLED ? 'closed' : e.details || e.message));
    stream.on('end', () => (s.ended ??= 'closed by the coordinator'));
    stream.write({ startup: { version: FLEET_VERSION, name } });
    stream.write({ subscribe: { all_places: true } });
    stream.write({ subscribe: { all_resources: true } });
    try {
      await s.sync();
    } catch (err) {
      s.close();
      throw err;
    }
    return s;
  }

  private receive(m: ClientOutMessage): void {
    for (const u of m.updates ?? []) {
      if (u.place?.name) {
        this.placesByName.set(u.place.name, u.place);
        for (const f of this.onPlace) f(u.place);
      }
      else if (u.del_place) this.placesByName.delete(u.del_place);
      else if (u.resource) this.resources.set(resourceKey(u.resource), u.resource);
      else if (u.del_resource) for (const [k, r] of this.resources) if (r.path?.exporter_name === u.del_resource.exporter_name && r.path?.group_name === u.del_resource.group_name && r.path?.resource_name === u.del_resource.resource_name) this.resources.delete(k);
    }
    if (m.sync?.id !== undefined) this.syncs.get(m.sync.id)?.();
  }

  /** Resolves once the coordinator has handled everything sent before (its answers come in order). */
  async sync(timeoutMs = CONNECT_TIMEOUT_MS): Promise<void> {
    const id = this.nextSync++;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => (this.syncs.delete(id), reject(unreachable(this.address, this.ended ?? `no answer to a sync within ${timeoutMs / 1000} s`))), timeoutMs);
      this.syncs.set(id, () => (clearTimeout(timer), this.syncs.delete(id), resolve()));
      this.stream!.write({ sync: { id } });
    });
  }

  /** The resources a place's matches select (exporter/group/cls[/name], fnmatch-style `*`). */
  resourcesOf(place: Place): Resource[] {
    const glob = (p: string, s: string) => new RegExp(`^${p.replace(/[.+^${}()|[\]\\?]/g, '\\$&').replace(/\*/g, '.*')}$`).test(s);
    return [...this.resources.values()].filter((r) =>
      (place.matches ?? []).some((m) => glob(m.exporter ?? '*', r.path?.exporter_name ?? '') && glob(m.group ?? '*', r.path?.group_name ?? '') && glob(m.cls ?? '*', r.cls ?? '') && (!m.name || glob(m.name, r.path?.resource_name ?? ''))),
    );
  }

  override close(): void {
    this.stream?.cancel();
    this.stream = undefined;
    super.close();
  }
}
