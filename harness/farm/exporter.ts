// The harness as a labgrid exporter: an ExporterStream that publishes each board's serial port as a
// `NetworkSerialPort` resource (host, port, speed, protocol rfc2217, as labgrid's exporter sends one
// from its YAML) and answers the coordinator's set_acquired requests. It sends the updated resource
// before its response: the other order leaves the place acquired without resources (SNAPSHOT.md).
// A board can be refused (quarantined): the response then fails with the reason, and the
// coordinator's AcquirePlace fails for every client, stock labgrid-client included.
import { hostname } from 'node:os';
import * as grpc from '@grpc/grpc-js';
import { ClientSession, CoordinatorChannel, FLEET_VERSION } from './client.ts';
import { FarmError } from './errors.ts';
import type { ExporterInMessage, ExporterOutMessage, MapValue, Resource } from './labgrid/messages.ts';

export const RESOURCE_CLASS = 'NetworkSerialPort';

/** rfc2217://host:port of a NetworkSerialPort resource (the coordinator passes positive ints on as uint_value). */
export function serialPortUrl(r: Resource): string | undefined {
  const host = r.params?.host?.string_value;
  const port = r.params?.port?.int_value ?? r.params?.port?.uint_value;
  return r.cls === RESOURCE_CLASS && host && port ? `rfc2217://${host}:${port}` : undefined;
}

export interface ExportedPort {
  /** The resource's group: the board's id on the rig. */
  group: string;
  host: string;
  port: number;
  speed: number;
}

export class LabgridExporter {
  private stream: grpc.ClientDuplexStream<ExporterInMessage, ExporterOutMessage> | undefined;
  private readonly acquired = new Map<string, string>();
  /** Set when the coordinator ends the stream (it stopped, or refused the name). */
  ended: string | undefined;

  private constructor(
    readonly channel: CoordinatorChannel,
    readonly name: string,
    readonly ports: ExportedPort[],
    private readonly refuse: (group: string) => string | undefined,
  ) {}

  /** Registers with the coordinator and publishes the ports; resolves once the coordinator lists them. */
  static async start(address: string, name: string, ports: ExportedPort[], o: { refuse?: (group: string) => string | undefined; onEnd?: (why: string) => void } = {}): Promise<LabgridExporter> {
    const channel = await CoordinatorChannel.open(address);
    const e = new LabgridExporter(channel, name, ports, o.refuse ?? (() => undefined));
    const stream = channel.client.ExporterStream();
    e.stream = stream;
    const failed = new Promise<never>((_, reject) => {
      stream.on('error', (err: grpc.ServiceError) => {
        if (err.code === grpc.status.CANCELLED && e.stream === undefined) return;
        e.ended = err.code === grpc.status.ALREADY_EXISTS ? `an exporter named ${name} is already registered with the coordinator at ${address} (another fleet farm export, or one that has just stopped: try again in a few seconds)` : `the coordinator at ${address} ended the exporter's stream: ${err.details || err.message}`;
        o.onEnd?.(e.ended);
        reject(new FarmError(err.code === grpc.status.ALREADY_EXISTS ? 'refused' : 'unreachable', e.ended));
      });
    });
    failed.catch(() => undefined);
    stream.on('data', (m: ExporterOutMessage) => e.receive(m));
    stream.write({ startup: { version: FLEET_VERSION, name } });
    for (const p of ports) e.publish(p.group);
    try {
      await Promise.race([e.registered(address), failed]);
    } catch (err) {
      e.withdraw();
      throw err;
    }
    return e;
  }

  /** The resource as labgrid's exporter describes a NetworkSerialPort (ints as int_value). */
  resource(group: string): Resource {
    const p = this.ports.find((x) => x.group === group)!;
    const params: Record<string, MapValue> = { host: { string_value: p.host }, port: { int_value: p.port }, speed: { int_value: p.speed }, protocol: { string_value: 'rfc2217' } };
    const extra: Record<string, MapValue> = { proxy: { string_value: hostname() }, proxy_required: { bool_value: false } };
    return { path: { group_name: group, resource_name: RESOURCE_CLASS }, cls: RESOURCE_CLASS, params, extra, acquired: this.acquired.get(group) ?? '', avail: true };
  }

  private publish(group: string): void {
    this.stream?.write({ resource: this.resource(group) });
  }

  /** The stream has no acknowledgement: a client session watches until the coordinator lists the resources. */
  private async registered(address: string): Promise<void> {
    const session = await ClientSession.start(address, `${hostname()}/fleet-exporter-${process.pid}`);
    try {
      for (let i = 0; i < 50; i++) {
        await session.sync();
        const listed = [...session.resources.values()].filter((r) => r.path?.exporter_name === this.name);
        if (this.ports.every((p) => listed.some((r) => r.path?.group_name === p.group))) return;
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      session.close();
    }
    throw new FarmError('unreachable', `the coordinator at ${address} did not list the exporter ${this.name}'s resources within 5 s`);
  }

  private receive(m: ExporterOutMessage): void {
    const req = m.set_acquired_request;
    if (!req) return;
    const group = req.group_name ?? '';
    const known = this.ports.some((p) => p.group === group) && req.resource_name === RESOURCE_CLASS;
    let reason: string | undefined;
    if (!known) reason = `no resource ${group}/${req.resource_name} on exporter ${this.name}`;
    else if (req.place_name) {
      reason = this.refuse(group);
      if (!reason && this.acquired.get(group)) reason = `${group} is already acquired by place ${this.acquired.get(group)}`;
      if (!reason) this.acquired.set(group, req.place_name);
    } else this.acquired.delete(group);
    if (known && !reason) this.publish(group);
    this.stream?.write({ response: { success: !reason, ...(reason ? { reason } : {}) } });
  }

  /** The place that holds a board now, if any. */
  holder(group: string): string | undefined {
    return this.acquired.get(group);
  }

  /** Ends the registration: the coordinator drops the resources at once (cancel, not end: SNAPSHOT.md). */
  withdraw(): void {
    const s = this.stream;
    this.stream = undefined;
    s?.cancel();
    this.channel.close();
  }
}
