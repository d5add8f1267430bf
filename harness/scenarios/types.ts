import type { ScenarioContext } from '../bench.ts';

export interface Scenario {
  name: string;
  title: string;
  /** What the rig must have; a scenario the rig cannot run is reported as not applicable, with the reason (runner.ts). */
  needs: {
    controllers?: number;
    clients?: number;
    debugSource?: boolean;
    /** The harness moves boards (radio range): virtual boards driven directly only. */
    moveBoards?: boolean;
    /** A board takes another board's UUID (a replacement board): virtual boards driven directly only. */
    replaceBoard?: boolean;
    /** The harness reaches a controller's SoftAP listener. */
    softapHttp?: boolean;
    /** Firmware settings (of `firmwareSettings`) the scenario depends on; a physical rig's build must have them. */
    settings?: string[];
  };
  /** Firmware settings for the virtual boards of this scenario (a real rig flashes such a build). */
  firmwareSettings?: Record<string, unknown>;
  run(ctx: ScenarioContext): Promise<void>;
}
