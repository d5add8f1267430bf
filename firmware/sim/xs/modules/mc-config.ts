// `mc/config` (tools/mcconfig: the manifest's "config", overridden by name=value arguments): on a
// virtual board the host hands the board's build configuration over at boot (runtime.ts fills this
// object before the platform reads it).
const config: Record<string, unknown> = {};
export default config;
