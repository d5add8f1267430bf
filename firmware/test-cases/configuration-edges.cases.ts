// The client configuration rules at the edges the main table (configuration.cases.ts) leaves out:
// the CA certificate's size limit and DER shapes (short and long length forms), a passphrase that is
// not a string, and what each kind of broken CA is called (the reason the 400 and the client's log
// give).
import { clientConfigurationProblem, pemCertificateProblem } from '../src/core/client-configuration.ts';
import { equal, type TestCase } from './assert.ts';
import { clientConfig, TEST_CA_PEM } from './fixtures.ts';

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
function base64(bytes: number[]): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += B64[(n >> 18) & 63]! + B64[(n >> 12) & 63]! + (i + 1 < bytes.length ? B64[(n >> 6) & 63]! : '=') + (i + 2 < bytes.length ? B64[n & 63]! : '=');
  }
  return out;
}
const pem = (der: number[]) => `-----BEGIN CERTIFICATE-----\n${base64(der)}\n-----END CERTIFICATE-----\n`;

export const configurationEdgeCases: TestCase[] = [
  {
    name: 'CA certificate: DER with short-form length, the shortest (4 bytes) and a 3-byte long-form length are accepted; exactly 8192 characters is within the limit',
    async run() {
      equal(pemCertificateProblem(pem([0x30, 0x03, 0x30, 0x01, 0x00])), null, 'short form');
      equal(pemCertificateProblem(pem([0x30, 0x02, 0x30, 0x00])), null, '4 bytes');
      equal(pemCertificateProblem(pem([0x30, 0x83, 0x00, 0x00, 0x02, 0x30, 0x00])), null, 'long form of 3 bytes');
      equal(pemCertificateProblem(pem([0x30, 0x81, 0x02, 0x30, 0x00])), null, 'long form of 1 byte');
      const exact = TEST_CA_PEM + ' '.repeat(8192 - TEST_CA_PEM.length);
      equal(exact.length, 8192, 'the padded text');
      equal(pemCertificateProblem(exact), null, '8192 characters');
      equal(pemCertificateProblem(exact + ' '), 'is longer than 8192 characters', '8193 characters');
    },
  },
  {
    name: 'CA certificate: each kind of problem has its own reason (missing, blank, not Base64, not DER, not PEM, text outside)',
    async run() {
      equal(pemCertificateProblem(''), 'is missing (a PEM CA certificate)', 'empty');
      equal(pemCertificateProblem(' \r\n\t'), 'is missing (a PEM CA certificate)', 'blank');
      equal(pemCertificateProblem(42), 'is missing (a PEM CA certificate)', 'a number');
      equal(pemCertificateProblem('-----BEGIN CERTIFICATE-----\nMII=B\n-----END CERTIFICATE-----\n'), 'block 1 is not Base64', 'padding inside');
      equal(pemCertificateProblem(`${TEST_CA_PEM}-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----\n`), 'block 2 is not Base64', 'a second block of one character');
      equal(pemCertificateProblem(pem([0x30, 0x82, 0x00])), 'block 1 is not a DER certificate', 'long form cut short');
      equal(pemCertificateProblem(pem([0x30, 0x83, 0x00, 0x00])), 'block 1 is not a DER certificate', 'a 3-byte length with no bytes after it');
    },
  },
  {
    name: 'a Wi-Fi passphrase must be a string: a number of eight digits is refused',
    async run() {
      const base = clientConfig('02:00:00:C0:00:01') as Record<string, unknown>;
      equal(clientConfigurationProblem({ ...base, wifi: { ssid: 'plant-floor', password: 12345678 } })?.field, 'wifi.password', 'number');
      equal(clientConfigurationProblem({ ...base, wifi: { ssid: 'plant-floor', password: ['12345678'] } })?.field, 'wifi.password', 'array');
      equal(clientConfigurationProblem({ ...base, mqtt: { host: 'broker.local', port: '8883' } })?.field, 'mqtt.port', 'port as a string');
      equal(clientConfigurationProblem({ ...base, mqtt: { host: 12345, port: 8883 } })?.field, 'mqtt.host', 'host as a number');
    },
  },
];
