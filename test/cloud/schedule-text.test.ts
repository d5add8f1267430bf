// A rollout's schedule in words people read (cloud/ota/schedule-text.ts), as the CLI and the console say it.
import { describe, expect, it } from 'vitest';
import { durationText, scheduleText } from '../../cloud/ota/schedule-text.ts';

describe('schedule text', () => {
  it('says a duration in the largest unit that divides it', () => {
    expect([86_400, 172_800, 3_600, 21_600, 1_800, 60, 90, 1, 0, 5_400].map(durationText)).toEqual(['1 day', '2 days', '1 h', '6 h', '30 min', '1 min', '90 s', '1 s', '0 s', '90 min']);
  });

  it('says a schedule, or nothing without one', () => {
    expect(scheduleText({ step_percent: 10, step_every_seconds: 86_400 })).toBe('+10 % every 1 day');
    expect(scheduleText({ step_percent: null, step_every_seconds: null })).toBe('');
  });
});
