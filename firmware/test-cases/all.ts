// Every portable test case, by group. Run on Node by test/firmware/core.test.ts and inside XS by
// test/firmware/xs-cases.test.ts.
import type { TestCase } from './assert.ts';
import { backupStoreCases } from './backup-store.cases.ts';
import { clientCases } from './client.cases.ts';
import { cloudBackupCases } from './cloud-backup.cases.ts';
import { configurationCases } from './configuration.cases.ts';
import { consoleCases } from './console.cases.ts';
import { cryptoVectorCases } from './crypto-vectors.cases.ts';
import { ffceCases } from './ffce.cases.ts';
import { modeCases } from './mode.cases.ts';
import { radioCases } from './radio.cases.ts';
import { settingsCases } from './settings.cases.ts';
import { storagePathCases } from './storage-paths.cases.ts';
import { targetCases } from './target.cases.ts';
import { throttleCases } from './throttle.cases.ts';
import { tokenCases } from './tokens.cases.ts';
import { visualTokenCases } from './visual-token.cases.ts';

export const caseGroups: Record<string, TestCase[]> = {
  'crypto vectors': cryptoVectorCases,
  'crypto glue': ffceCases,
  'backup store': backupStoreCases,
  'cloud backup': cloudBackupCases,
  'provisioning tokens': tokenCases,
  'provisioning mode': modeCases,
  'target procedure': targetCases,
  'client procedure': clientCases,
  'serial console': consoleCases,
  'storage paths': storagePathCases,
  'login throttle': throttleCases,
  'visual token': visualTokenCases,
  configuration: configurationCases,
  'compile-time settings': settingsCases,
  'SoftAP radio': radioCases,
};
