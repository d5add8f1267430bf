// The shapes of the admin API's answers the console reads (cloud/schema/api.ts declares them).
export interface Session {
  subject: string | null;
  expires_at: string;
  csrf_token: string;
}

export interface Track {
  class: string;
  product_hex: string;
  application: string;
  released: number;
  revoked: number;
  latest: string | null;
}

export interface Outcomes {
  pending: number;
  succeeded: number;
  failed: number;
}

export interface Rollout {
  version: string;
  state: 'active' | 'paused';
  percent: number;
  effective_percent: number;
  groups: string[];
  step_percent: number | null;
  step_every_seconds: number | null;
  error_threshold_percent: number;
  min_reports: number;
  paused_reason: string | null;
  outcomes: Outcomes;
}

export interface Release {
  version: string;
  status: 'RELEASED' | 'REVOKED';
  released_at: string;
  revoked_at?: string;
  url?: string;
  size?: number;
  sha256?: string;
  hosted: boolean;
  chip?: string;
  project?: string;
  rollout: Rollout | null;
  outcomes: Outcomes;
}

export interface Device {
  uuid: string;
  label?: string;
  enrolled_at: string;
  groups: string[];
  last_check: { at: string; version: string; class: string; product_hex: string; application: string } | null;
  offer: { version: string; from_version: string; at: string } | null;
  backup: { size: number; etag: string | null; last_backup_date: string } | null;
}

export interface FunctionConfig {
  function_name: string;
  effective_level: string;
  staged: { version: number; configuration: { logging?: string }; staged_at: string } | null;
  deployed: { version: number; configuration: { logging?: string }; deployed_at: string } | null;
  deployment: { version: number; state: 'IN_PROGRESS' | 'COMPLETE'; started_at: string; ends_at: string } | null;
}

export interface AuditEntry {
  id: number;
  at: string;
  actor: string;
  via: string;
  action: string;
  method: string;
  path: string;
  status: number;
}
