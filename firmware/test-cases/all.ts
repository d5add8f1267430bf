// Every portable test case, by group. Run on Node by test/firmware/core.test.ts and inside XS by
// test/firmware/xs-cases.test.ts.
import type { TestCase } from './assert.ts';
import { adminPasswordCases } from './admin-password.cases.ts';
import { backupStoreCases } from './backup-store.cases.ts';
import { bodyBudgetCases } from './body-budget.cases.ts';
import { clientAttemptCases } from './client-attempt.cases.ts';
import { clientCases } from './client.cases.ts';
import { cloudBackupEdgeCases } from './cloud-backup-edges.cases.ts';
import { cloudBackupCases } from './cloud-backup.cases.ts';
import { configurationEdgeCases } from './configuration-edges.cases.ts';
import { configurationCases } from './configuration.cases.ts';
import { consoleCases } from './console.cases.ts';
import { cryptoVectorCases } from './crypto-vectors.cases.ts';
import { factoryResetCases } from './factory-reset.cases.ts';
import { ffceCases } from './ffce.cases.ts';
import { healthCases } from './health.cases.ts';
import { modeEdgeCases } from './mode-edges.cases.ts';
import { modeCases } from './mode.cases.ts';
import { otaClientCases } from './ota-client.cases.ts';
import { radioCases } from './radio.cases.ts';
import { recordCases } from './records.cases.ts';
import { settingsCases } from './settings.cases.ts';
import { storagePathCases } from './storage-paths.cases.ts';
import { targetStepCases } from './target-steps.cases.ts';
import { targetCases } from './target.cases.ts';
import { throttleUnitCases } from './throttle-unit.cases.ts';
import { throttleCases } from './throttle.cases.ts';
import { tokenCases } from './tokens.cases.ts';
import { visualTokenCases } from './visual-token.cases.ts';

export const caseGroups: Readonly<Record<string, readonly TestCase[]>> = Object.freeze({
  'crypto vectors': cryptoVectorCases,
  'crypto glue': ffceCases,
  'backup store': backupStoreCases,
  'cloud backup': cloudBackupCases,
  'cloud backup edges': cloudBackupEdgeCases,
  'provisioning tokens': tokenCases,
  'provisioning mode': modeCases,
  'provisioning mode, two stops': modeEdgeCases,
  'target procedure': targetCases,
  'target procedure, step by step': targetStepCases,
  'client procedure': clientCases,
  'client procedure, step by step': clientAttemptCases,
  'serial console': consoleCases,
  'factory reset': factoryResetCases,
  'storage paths': storagePathCases,
  'login throttle': throttleCases,
  'throttle rule': throttleUnitCases,
  'visual token': visualTokenCases,
  'admin password': adminPasswordCases,
  configuration: configurationCases,
  'configuration edges': configurationEdgeCases,
  'record store': recordCases,
  'request body budget': bodyBudgetCases,
  'compile-time settings': settingsCases,
  'SoftAP radio': radioCases,
  'OTA update check': otaClientCases,
  'health reports': healthCases,
});
