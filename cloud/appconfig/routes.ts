// /appconfig routes (spec 4.1, 3.4): every route needs a super-user JWT (403 otherwise).
import { Router, type RequestHandler } from 'express';
import { route, sendJson } from '../http.ts';
import type { FunctionLogger } from '../logging.ts';
import { AppConfigService, checkFunctionName } from './service.ts';
import { requireJsonBody } from '../json-body.ts';

export function appconfigRoutes(service: AppConfigService, superUser: RequestHandler, log: FunctionLogger): Router {
  const router = Router();
  router.use('/appconfig', superUser);

  router.get(
    '/appconfig',
    route(async (_req, res) => {
      sendJson(res, 200, { functions: await service.list() });
    }),
  );

  router.get(
    '/appconfig/:function_name',
    route(async (req, res) => {
      sendJson(res, 200, await service.get(checkFunctionName(req.params.function_name as string)));
    }),
  );

  router.patch(
    '/appconfig/:function_name',
    route(async (req, res) => {
      const fn = checkFunctionName(req.params.function_name as string);
      const view = await service.stage(fn, requireJsonBody(req));
      log.info('configuration staged', { function_name: fn, version: view.staged?.version, by: res.locals.superUser?.subject });
      sendJson(res, 200, view);
    }),
  );

  router.post(
    '/appconfig/:function_name/deploy',
    route(async (req, res) => {
      const fn = checkFunctionName(req.params.function_name as string);
      const view = await service.deploy(fn);
      log.info('deployment started', { function_name: fn, version: view.deployed?.version, level: view.effective_level, by: res.locals.superUser?.subject });
      sendJson(res, 202, view);
    }),
  );

  router.delete(
    '/appconfig/:function_name',
    route(async (req, res) => {
      const fn = checkFunctionName(req.params.function_name as string);
      await service.remove(fn);
      log.info('configuration deleted', { function_name: fn, by: res.locals.superUser?.subject });
      res.status(204).end();
    }),
  );

  return router;
}
