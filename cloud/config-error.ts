/** A configuration the cloud cannot start with (an environment variable out of range, a secret file unreadable). */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
