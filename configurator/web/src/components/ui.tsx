// The configurator's own small pieces (the fields, buttons and hooks are the web kit's,
// web-common/browser/): the line that says how the last action went, read out by screen readers, and
// ETags as people compare them. Every value is rendered as text (Preact escapes it).
import type { Outcome } from '../../../../web-common/browser/hooks.ts';

/** The outcome of the last action, announced politely (role=status) or assertively for errors. */
export function Message({ outcome, testId }: { outcome: Outcome; testId?: string }) {
  if (!outcome) return null;
  return (
    <p class={`message ${outcome.kind}`} role={outcome.kind === 'error' ? 'alert' : 'status'} data-testid={testId}>
      {outcome.text}
    </p>
  );
}

/** The first 12 hex digits of an ETag, as people compare them. */
export const shortEtag = (etag: string | null) => (etag ? etag.slice(0, 12) : '—');
