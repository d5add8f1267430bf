// Client provisioning (spec 3.5): a client with no configuration joins the source's SoftAP, gets
// its record, reboots, and connects to the site Wi-Fi and then the MQTT broker using only that.
import { check } from '../bench.ts';
import { enableProvisioning, nextEvent, publishSeen, seedSource } from './helpers.ts';
import type { Scenario } from './types.ts';

export const clientProvisioningScenarios: Scenario[] = [
  {
    name: 'client-provisioning',
    title: 'Client provisioning, ending connected to the MQTT broker',
    needs: { controllers: 1, clients: 1 },
    async run(ctx) {
      const source = ctx.controllers()[0]!;
      const client = ctx.clients()[0]!;
      await ctx.step('power on the source and register the client', async () => {
        await ctx.start(source);
        await seedSource(ctx, source, { clientBoards: [client] });
      });
      await ctx.step('enable provisioning mode', async () => {
        await enableProvisioning(ctx, source);
      });
      const from = client.consoleLines().length;
      await ctx.step('power on the unprovisioned client: it gets its configuration and reboots', async () => {
        await ctx.start(client);
        const e = await nextEvent(client, 'client_provisioning', from);
        check(e.result === 'provisioned', `client provisioning: ${JSON.stringify(e)}`);
      });
      await ctx.step('after the reboot the client joins the site Wi-Fi and connects to MQTT', async () => {
        const e = await nextEvent(client, 'client_normal_mode', from, 30_000);
        check(e.result === 'mqtt_connected', `normal mode: ${JSON.stringify(e)}`);
        check(ctx.broker.connections.includes(client.spec.uuid), `the broker saw ${client.spec.uuid} (saw ${ctx.broker.connections.join(', ')})`);
        check(await publishSeen(ctx, (p) => p.clientId === client.spec.uuid && p.topic === `devices/${client.spec.uuid}/status`), 'a status message within 5 s of the event');
        ctx.snapshot(client, 'normal mode');
      });
      await ctx.step('the source logged the token it issued', async () => {
        check(source.events().some((e) => e.message.includes(`provisioning token issued to ${client.spec.wifiMac}`)), 'token issued');
      });
    },
  },
];
