import type { ScenarioContext } from '../bench.ts';

export interface Scenario {
  name: string;
  title: string;
  /** What the rig must have; a scenario the rig cannot run is reported as not applicable. */
  needs: { controllers?: number; clients?: number; debugSource?: boolean };
  /** Firmware settings for the virtual boards of this scenario (a real rig flashes such a build). */
  firmwareSettings?: Record<string, unknown>;
  run(ctx: ScenarioContext): Promise<void>;
}
