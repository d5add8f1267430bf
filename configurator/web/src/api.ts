// The page's only way to its server: one call per route of the configurator's API, made from its
// route table (schema/routes.ts), which gives each call its path, its success status and its types.
// The web kit's client sends them (web-common/browser/api-client.ts): same origin, JSON, the header
// that tells the server the request comes from the page itself, and any answer but the route's
// success status taken as an error, whose code and message the page shows as they are.
import { apiClient } from '../../../web-common/browser/api-client.ts';
import { PAGE_HEADER } from '../../../web-common/page-header.ts';
import type { Configuration } from '../../schema/controller-configuration.ts';
import { ROUTES, type Answer, type Body, type ClientReport, type ClientSettings, type ClientsReport, type CloudBackupInfo, type Controller, type ControllerState, type DeviceEvent, type Params, type Provisioning, type RecordSummary, type RouteName, type Routes } from '../../schema/routes.ts';

export type { ClientReport, ClientSettings, ClientsReport, CloudBackupInfo, Configuration, Controller, ControllerState, DeviceEvent, Provisioning, RecordSummary };

const client = apiClient({
  base: '/api',
  server: 'The configurator',
  unreachable: 'The configurator does not answer: is `fleet configurator` still running?',
  headers: () => ({ [PAGE_HEADER]: '1' }),
});

/** A call's input: the path's parameters, the JSON body, or a document's text, as its route takes them. */
type Input<K extends RouteName> = Params<K> & ([Body<K>] extends [never] ? unknown : { body: Body<K> }) & (Routes[K] extends { document: true } ? { text: string } : unknown);
type Caller<K extends RouteName> = [keyof Input<K>] extends [never] ? () => Promise<Answer<K>> : (input: Input<K>) => Promise<Answer<K>>;

function call(name: RouteName, input: Record<string, unknown> = {}): Promise<unknown> {
  const spec = ROUTES[name];
  const path = spec.path.replace(/:(\w+)/g, (_, param: string) => encodeURIComponent(String(input[param])));
  if ('file' in spec) return client.download(path, 'backup.json');
  return client.request(spec.method, path, { body: input.body, raw: input.text as string | undefined, success: spec.success });
}

/** One call per route, each typed by its row of the table; at run time they are all `call`. */
export const api = Object.fromEntries((Object.keys(ROUTES) as RouteName[]).map((name) => [name, (input?: Record<string, unknown>) => call(name, input)])) as unknown as {
  [K in RouteName]: Caller<K>;
};
