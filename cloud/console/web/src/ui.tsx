// Small shared pieces of the console's pages (the hooks are the web kit's, web-common/browser/).
// Everything a device or an operator typed is rendered as a text node by Preact, never as markup (the
// console inserts no raw HTML anywhere: a test checks).
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useAction } from '../../../../web-common/browser/hooks.ts';
import { describeError } from './api.ts';

export function when(iso: string | null | undefined): string {
  return iso ? iso.slice(0, 19).replace('T', ' ') + ' UTC' : '—';
}

/** An error, or the text an action's error came to. */
export function ErrorLine({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <p class="error" role="alert">
      {describeError(error)}
    </p>
  );
}

/** A button that runs an action, shows it is busy, and reports its failure beside it. */
export function Action({ label, run, confirm, disabled }: { label: string; run: () => Promise<unknown>; confirm?: string; disabled?: boolean }) {
  const [armed, setArmed] = useState(false);
  const action = useAction(describeError);
  const click = () => {
    if (confirm && !armed) return setArmed(true);
    setArmed(false);
    void action.run(async () => void (await run()));
  };
  return (
    <span class="action">
      <button type="button" onClick={click} disabled={action.busy || disabled}>
        {armed ? confirm : label}
      </button>
      <ErrorLine error={action.outcome?.text} />
    </span>
  );
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

/** A table with a header row of `columns`; the children are its rows. */
export function Table({ columns, children }: { columns: string[]; children: ComponentChildren }) {
  return (
    <table>
      <thead>
        <tr>
          {columns.map((c, i) => (
            <th key={i}>{c}</th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
