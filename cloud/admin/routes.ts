// The admin API (DESIGN.md section 4), for super users: the device inventory (enroll, remove, groups,
// what the cloud knows of each device: docs/device-inventory.md), firmware releases and rollouts
// (./firmware.ts), each track's signing setting (./signing.ts), and the audit log (./audit.ts).
import { Router, type Request, type RequestHandler } from 'express';
import type { Admission } from '../admission.ts';
import { checkDevicePublicKey, rememberEnrolledKey } from '../auth/device-signature.ts';
import type { CloudConfig } from '../config.ts';
import { ApiError } from '../errors.ts';
import { route, sendJson } from '../http.ts';
import { requireJsonBody } from '../json-body.ts';
import type { FunctionLogger } from '../logging.ts';
import type { HealthService } from '../device-health/service.ts';
import { deviceHealthView } from '../device-health/views.ts';
import type { ReleaseService } from '../ota/releases.ts';
import { Type } from '@sinclair/typebox';
import { DeviceGroupsBody, DeviceLabelBody, DeviceVersionsQuery, EnrollBody, InventoryQuery, Label, UuidParams } from '../schema/api.ts';
import { checked, checker } from '../schema/request.ts';
import type { CloudStore, DeviceRecord, InventoryFilter, InventoryRecord, TrackFilter, VersionCount } from '../store/types.ts';
import { auditRoutes, who } from './audit.ts';
import { firmwareRoutes } from './firmware.ts';
import { healthAdminRoutes } from './health.ts';
import { signingRoutes } from './signing.ts';

export interface AdminRoutesDeps {
  store: CloudStore;
  releases: ReleaseService;
  health: HealthService;
  superUser: RequestHandler;
  log: FunctionLogger;
  now: () => number;
  config: Pick<CloudConfig, 'publicUrl'>;
  bodyIdleTimeoutMs: number;
  uploads: Admission | undefined;
}

const checkUuid = checker(UuidParams);
const checkEnroll = checker(EnrollBody);
const checkLabel = checker(Type.Object({ label: Label }));
const checkGroups = checker(DeviceGroupsBody);
const checkInventory = checker(InventoryQuery);
const checkDeviceLabel = checker(DeviceLabelBody);
const checkVersionsQuery = checker(DeviceVersionsQuery);
const DAY_MS = 86_400_000;
export const INVENTORY_DEFAULT_LIMIT = 1000;
export const INVENTORY_MAX_LIMIT = 10_000;

function deviceView(d: DeviceRecord) {
  return { uuid: d.uuid, public_key: d.publicKeyPem, enrolled_at: d.enrolledAt, updated_at: d.updatedAt, ...(d.label !== undefined ? { label: d.label } : {}) };
}

/** A device as the inventory shows it (GET /admin/devices, the console, `fleet device list`). */
export function inventoryView(d: InventoryRecord) {
  return {
    ...deviceView(d),
    groups: d.groups,
    last_check: d.lastCheck && { at: d.lastCheck.at, version: d.lastCheck.version, class: d.lastCheck.track.class, product_hex: d.lastCheck.track.productHex, application: d.lastCheck.track.application },
    offer: d.offer && { version: d.offer.version, from_version: d.offer.fromVersion, at: d.offer.at },
    backup: d.backup && { size: d.backup.size, etag: d.backup.etag, last_backup_date: d.backup.lastBackupDate },
    health: deviceHealthView(d.health),
  };
}

/** Counts of versions grouped by track, in the store's order (tracks in order, versions newest first). */
export function deviceVersionsView(counts: VersionCount[]) {
  const tracks: { class: string; product_hex: string; application: string; devices: number; versions: { version: string; devices: number; status: VersionCount['status'] }[] }[] = [];
  for (const c of counts) {
    let t = tracks.at(-1);
    if (!t || t.class !== c.track.class || t.product_hex !== c.track.productHex || t.application !== c.track.application) {
      t = { class: c.track.class, product_hex: c.track.productHex, application: c.track.application, devices: 0, versions: [] };
      tracks.push(t);
    }
    t.devices += c.devices;
    t.versions.push({ version: c.version, devices: c.devices, status: c.status });
  }
  return { tracks };
}

function uuidParam(req: Request): string {
  return checked(checkUuid, { uuid: req.params.uuid }, 'invalid_uuid').uuid;
}

/** The inventory filters of a query; "N days" is counted back from now. */
export function inventoryFilter(query: unknown, nowMs: number): InventoryFilter {
  const q = checked(checkInventory, query, 'invalid_query');
  const daysAgo = (days: string) => new Date(nowMs - Number(days) * DAY_MS).toISOString();
  const isoOf = (v: string) => new Date(v).toISOString();
  const limit = q.limit === undefined ? INVENTORY_DEFAULT_LIMIT : Number(q.limit);
  if (limit < 1 || limit > INVENTORY_MAX_LIMIT) throw new ApiError('invalid_query', { field: 'limit', value: q.limit, expected: `1 to ${INVENTORY_MAX_LIMIT}` }, `limit: expected 1 to ${INVENTORY_MAX_LIMIT}, got ${q.limit}`);
  const f: InventoryFilter = { limit };
  if (q.class !== undefined) f.class = q.class;
  if (q.product_hex !== undefined) f.productHex = q.product_hex.toLowerCase();
  if (q.application !== undefined) f.application = q.application;
  if (q.version !== undefined) f.version = q.version;
  if (q.not_seen_since !== undefined || q.not_seen_days !== undefined) f.notSeenSince = q.not_seen_since !== undefined ? isoOf(q.not_seen_since) : daysAgo(q.not_seen_days!);
  if (q.no_backup_since !== undefined || q.no_backup_days !== undefined) f.noBackupSince = q.no_backup_since !== undefined ? isoOf(q.no_backup_since) : daysAgo(q.no_backup_days!);
  if (q.search !== undefined) f.search = q.search;
  if (q.group !== undefined) f.group = q.group;
  if (q.crashed_days !== undefined) f.crashedSince = daysAgo(q.crashed_days);
  if (q.low_heap !== undefined) f.lowHeapBelow = Number(q.low_heap);
  if (q.behind === 'true') f.behind = true;
  if (q.failed_update === 'true') f.failedUpdate = true;
  if (q.after !== undefined) f.after = q.after;
  if (q.match === 'any') {
    if (f.notSeenSince === undefined && f.noBackupSince === undefined && f.crashedSince === undefined && f.lowHeapBelow === undefined && !f.behind && !f.failedUpdate) {
      throw new ApiError('invalid_query', { field: 'match', value: q.match }, 'match=any combines conditions: give at least one of not_seen_days, not_seen_since, no_backup_days, no_backup_since, crashed_days, low_heap, behind, failed_update');
    }
    f.match = 'any';
  }
  return f;
}

export function adminRoutes(deps: AdminRoutesDeps): Router {
  const { store, superUser, log, now } = deps;
  const router = Router();
  router.use('/admin', superUser);
  const iso = () => new Date(now()).toISOString();

  router.get(
    '/admin/devices',
    route(async (req, res) => {
      const filter = inventoryFilter({ ...req.query }, now());
      const devices = await store.listInventory(filter);
      sendJson(res, 200, { devices: devices.map(inventoryView), next_after: devices.length === filter.limit ? devices.at(-1)!.uuid : null });
    }),
  );

  router.get(
    '/admin/device-versions',
    route(async (req, res) => {
      const q = checked(checkVersionsQuery, { ...req.query }, 'invalid_query');
      const filter: TrackFilter = {};
      if (q.class !== undefined) filter.class = q.class;
      if (q.product_hex !== undefined) filter.productHex = q.product_hex.toLowerCase();
      if (q.application !== undefined) filter.application = q.application;
      sendJson(res, 200, deviceVersionsView(await store.countDeviceVersions(filter)));
    }),
  );

  router.get(
    '/admin/devices/:uuid',
    route(async (req, res) => {
      const [device] = await store.listInventory({ uuid: uuidParam(req), limit: 1 });
      if (!device) throw new ApiError('device_not_found');
      sendJson(res, 200, inventoryView(device));
    }),
  );

  router.put(
    '/admin/devices/:uuid',
    route(async (req, res) => {
      const uuid = uuidParam(req);
      // Never echoed nor logged: what was sent may be a private key.
      const body = requireJsonBody(req);
      const label = typeof body === 'object' && body !== null ? (body as { label?: unknown }).label : undefined;
      if (label !== undefined) checked(checkLabel, { label }, 'invalid_body');
      if (!checkEnroll(body)) {
        throw new ApiError('invalid_public_key', { reason: 'not_spki_pem', field: 'public_key', expected: 'a PEM SPKI string of at most 4096 characters' });
      }
      const key = checkDevicePublicKey(body.public_key);
      if (!('key' in key)) {
        const { message, ...details } = key;
        throw new ApiError('invalid_public_key', details, message);
      }
      const { device, created } = await store.putDevice(uuid, key.pem, iso(), body.label);
      // The key is parsed already: the device's first signed request need not parse it again.
      rememberEnrolledKey(uuid, device.publicKeyPem, key.key);
      log.info(created ? 'device enrolled' : 'device re-enrolled', { uuid, by: who(res) });
      sendJson(res, created ? 201 : 200, deviceView(device));
    }),
  );

  router.put(
    '/admin/devices/:uuid/groups',
    route(async (req, res) => {
      const uuid = uuidParam(req);
      const { groups } = checked(checkGroups, requireJsonBody(req), 'invalid_device_groups');
      if (!(await store.setDeviceGroups(uuid, groups))) throw new ApiError('device_not_found');
      // Rollouts by group read their members when a track loads: every track is reloaded.
      await deps.releases.groupsChanged();
      res.locals.audit = { groups };
      log.info('device groups set', { uuid, groups, by: who(res) });
      const [device] = await store.listInventory({ uuid, limit: 1 });
      sendJson(res, 200, inventoryView(device!));
    }),
  );

  router.put(
    '/admin/devices/:uuid/label',
    route(async (req, res) => {
      const uuid = uuidParam(req);
      const { label } = checked(checkDeviceLabel, requireJsonBody(req), 'invalid_body');
      const kept = label === null || label === '' ? null : label;
      if (!(await store.setDeviceLabel(uuid, kept, iso()))) throw new ApiError('device_not_found');
      res.locals.audit = { label: kept };
      log.info(kept === null ? 'device label cleared' : 'device label set', { uuid, by: who(res) });
      const [device] = await store.listInventory({ uuid, limit: 1 });
      sendJson(res, 200, inventoryView(device!));
    }),
  );

  router.delete(
    '/admin/devices/:uuid',
    route(async (req, res) => {
      const uuid = uuidParam(req);
      if (!(await store.deleteDevice(uuid))) throw new ApiError('device_not_found');
      log.info('device removed', { uuid, by: who(res) });
      res.status(204).end();
    }),
  );

  router.use(firmwareRoutes({ releases: deps.releases, store, config: deps.config, log, bodyIdleTimeoutMs: deps.bodyIdleTimeoutMs, uploads: deps.uploads }));
  router.use(signingRoutes(store, log, now));
  router.use(healthAdminRoutes(deps.health));
  router.use(auditRoutes(store));
  return router;
}
