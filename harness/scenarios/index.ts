import { clientProvisioningScenarios } from './client-provisioning.ts';
import { cloudBackupScenarios } from './cloud-backup.ts';
import { controllerProvisioningScenarios } from './controller-provisioning.ts';
import { deviceHealthScenarios } from './device-health.ts';
import { otaScenarios } from './ota.ts';
import { otaRollbackScenarios } from './ota-rollback.ts';
import { securityScenarios } from './security.ts';
import type { Scenario } from './types.ts';

export type { Scenario } from './types.ts';

export const scenarios: Scenario[] = [
  ...clientProvisioningScenarios,
  ...controllerProvisioningScenarios,
  ...cloudBackupScenarios,
  ...otaScenarios,
  ...otaRollbackScenarios,
  ...securityScenarios,
  ...deviceHealthScenarios,
];
