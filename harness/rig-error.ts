/** A rig file that cannot be used: unreadable, not a rig, or naming what it does not have. */
export class RigError extends Error {
  override name = 'RigError';
}
