// The site's client settings: what every client record carries (spec 2.6: the site Wi-Fi, the MQTT
// broker and the CA certificate the client trusts). Checked by the firmware's own rule.
import { useEffect, useId, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ActionForm, Button, Check, Field } from '../../../../web-common/browser/fields.tsx';
import { useAction } from '../../../../web-common/browser/hooks.ts';
import { Message } from '../components/ui.tsx';

export function SiteSettingsPage() {
  const [ssid, setSsid] = useState('');
  const [wifiPassword, setWifiPassword] = useState('');
  const [host, setHost] = useState('');
  const [port, setPort] = useState('8883');
  const [tls, setTls] = useState(true);
  const [username, setUsername] = useState('');
  const [mqttPassword, setMqttPassword] = useState('');
  const [ca, setCa] = useState('');
  const [path, setPath] = useState('');
  const action = useAction();
  const caId = useId();
  useEffect(() => {
    void action.run(async () => {
      const site = await api.site();
      setPath(site.path);
      const s = site.client_settings;
      if (!s) return;
      setSsid(s.wifi.ssid);
      setWifiPassword(s.wifi.password);
      setHost(s.mqtt.host);
      setPort(String(s.mqtt.port));
      setTls(s.mqtt.tls);
      setUsername(s.mqtt.username ?? '');
      setMqttPassword(s.mqtt.password ?? '');
      setCa(s.ca_certificate);
    });
  }, []);
  return (
    <main>
      <h1>Client settings</h1>
      <p class="detail">Site file: {path}. Every client record this site registers carries these settings.</p>
      <ActionForm
        class="panel"
        aria-label="Client settings"
        action={action}
        run={async () => {
          await api.saveClientSettings({
            body: {
              wifi: { ssid, password: wifiPassword },
              mqtt: { host, port: Number(port), tls, ...(username ? { username } : {}), ...(mqttPassword ? { password: mqttPassword } : {}) },
              ca_certificate: ca,
            },
          });
          return 'Saved: clients registered from now on get these settings';
        }}
      >
        <h2>Site Wi-Fi</h2>
        <div class="row">
          <Field label="SSID" value={ssid} onValue={setSsid} required />
          <Field label="Wi-Fi password" type="password" value={wifiPassword} onValue={setWifiPassword} required autocomplete="new-password" />
        </div>
        <h2>MQTT broker</h2>
        <p class="detail">The broker every client connects to. Each controller's own connection is set in its Configuration → MQTT, which shows this one beside it.</p>
        <div class="row">
          <Field label="Host" value={host} onValue={setHost} required />
          <Field label="Port" type="number" value={port} onValue={setPort} required />
          <Field label="User name" value={username} onValue={setUsername} autocomplete="off" />
          <Field label="MQTT password" type="password" value={mqttPassword} onValue={setMqttPassword} autocomplete="new-password" />
        </div>
        <Check label="TLS (off only for a plaintext broker on a bench)" checked={tls} onChange={setTls} />
        <div class="field">
          <label for={caId}>CA certificate (PEM)</label>
          <textarea id={caId} rows={8} value={ca} onInput={(e) => setCa((e.currentTarget as HTMLTextAreaElement).value)} required />
        </div>
        <Button type="submit" busy={action.busy}>
          Save client settings
        </Button>
        <Message outcome={action.outcome} testId="settings-message" />
      </ActionForm>
    </main>
  );
}
