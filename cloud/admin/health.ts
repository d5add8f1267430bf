// The admin API's device health (docs/device-health.md), for super users (mounted behind the
// authorizer), everything a console page needs: a device's timeline, a release's health, the fleet's.
import { Router, type Request } from 'express';
import { CRASHED_DAYS_DEFAULT, HEALTH_DAYS_KEPT, LOW_HEAP_DEFAULT_BYTES } from '../health-definitions.ts';
import type { HealthService } from '../device-health/service.ts';
import { ApiError } from '../errors.ts';
import { route, sendJson } from '../http.ts';
import { parseVersion } from '../ota/validate.ts';
import { UuidParams } from '../schema/api.ts';
import { DeviceHealthQuery, FleetHealthQuery } from '../schema/health.ts';
import { checked, checker } from '../schema/request.ts';
import { trackParams } from './audit.ts';

const checkUuid = checker(UuidParams);
const checkDeviceQuery = checker(DeviceHealthQuery);
const checkFleetQuery = checker(FleetHealthQuery);

/** A whole-number query parameter within its bounds (its default when absent); else 400 naming it. */
function within(value: string | undefined, field: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (n < min || n > max) throw new ApiError('invalid_query', { field, value, expected: `${min} to ${max}` }, `${field}: expected ${min} to ${max}, got ${value}`);
  return n;
}

export function healthAdminRoutes(health: HealthService): Router {
  const router = Router();

  router.get(
    '/admin/devices/:uuid/health',
    route(async (req: Request, res) => {
      const { uuid } = checked(checkUuid, { uuid: req.params.uuid }, 'invalid_uuid');
      const q = checked(checkDeviceQuery, { ...req.query }, 'invalid_query');
      const o = {
        limit: within(q.limit, 'limit', 1, 1000, 100),
        days: within(q.days, 'days', 1, HEALTH_DAYS_KEPT, 30),
        ...(q.before !== undefined ? { before: Number(q.before) } : {}),
      };
      sendJson(res, 200, await health.timeline(uuid, o));
    }),
  );

  router.get(
    '/admin/firmware/:class/:product_hex/:application/:version/health',
    route(async (req, res) => {
      sendJson(res, 200, await health.release(trackParams(req), parseVersion(req.params.version as string)));
    }),
  );

  router.get(
    '/admin/health',
    route(async (req, res) => {
      const q = checked(checkFleetQuery, { ...req.query }, 'invalid_query');
      const crashedDays = within(q.crashed_days, 'crashed_days', 1, 36_500, CRASHED_DAYS_DEFAULT);
      sendJson(res, 200, await health.fleet({ crashedDays, lowHeapBytes: within(q.low_heap, 'low_heap', 1, 1_000_000_000, LOW_HEAP_DEFAULT_BYTES) }));
    }),
  );

  return router;
}
