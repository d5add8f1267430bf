// --cloud as users write it: a bare host:port is a usage error (exit 2) that says to write http://,
// not an unreachable cloud (exit 3).
import { describe, expect, it } from 'vitest';
import { TEST_JWT_SECRET } from '../helpers/cloud.ts';
import { runFleet } from '../helpers/fleet-cli.ts';

const env = () => ({ JWT_SECRET: TEST_JWT_SECRET });

describe('--cloud without a scheme', () => {
  it.each(['127.0.0.1:8080', 'localhost:8080'])('%s is a usage error (exit 2) that says to write http://', async (url) => {
    const r = await runFleet(['--cloud', url, 'device', 'list'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`write it with its scheme: http://${url}`);
  });

  it('from FLEET_CLOUD_URL too, naming the variable', async () => {
    const r = await runFleet(['device', 'list'], { env: { ...env(), FLEET_CLOUD_URL: '127.0.0.1:8080' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("from env 'FLEET_CLOUD_URL' is invalid. The cloud URL must start with http:// or https://; write it with its scheme: http://127.0.0.1:8080");
  });

  it('another scheme, a user and password, or a query are usage errors too', async () => {
    for (const url of ['ftp://127.0.0.1/', 'http://admin:pw@127.0.0.1:8080', 'http://127.0.0.1:8080/?x=1']) {
      expect((await runFleet(['--cloud', url, 'device', 'list'], { env: env() })).code, url).toBe(2);
    }
  });

  it('`fleet --help` says the scheme and the prefix', async () => {
    const help = (await runFleet(['--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('--cloud <url> cloud base URL with its scheme, and its path prefix behind a reverse proxy (http://host/fleet-api) (default: "http://127.0.0.1:8080", env: FLEET_CLOUD_URL)');
  });
});

