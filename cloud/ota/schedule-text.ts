// A rollout's schedule as people read it ("every 1 day", not "every 86400 s"): the CLI and the
// console say it the same way.

/** A whole number of seconds in the largest unit that divides it: 2 days, 6 h, 30 min, 90 s. */
export function durationText(seconds: number): string {
  if (seconds > 0 && seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? '' : 's'}`;
  if (seconds > 0 && seconds % 3_600 === 0) return `${seconds / 3_600} h`;
  if (seconds > 0 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** "+10 % every 1 day", or '' for a rollout without a schedule. */
export function scheduleText(r: { step_percent: number | null; step_every_seconds: number | null }): string {
  return r.step_percent && r.step_every_seconds ? `+${r.step_percent} % every ${durationText(r.step_every_seconds)}` : '';
}
