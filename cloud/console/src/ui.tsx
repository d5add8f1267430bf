// Small shared pieces of the console's pages. Everything a device or an operator typed is rendered
// as a text node by Preact, never as markup (the console inserts no raw HTML anywhere: a test checks).
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { describeError } from './api.ts';

export function when(iso: string | null | undefined): string {
  return iso ? iso.slice(0, 19).replace('T', ' ') + ' UTC' : '—';
}

export function ErrorLine({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <p class="error" role="alert">
      {describeError(error)}
    </p>
  );
}

/** Loads with `load` and reloads on demand; `error` is the last failure. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: unknown; reload: () => void } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (d) => live && (setData(d), setError(null)),
      (e: unknown) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { data, error, reload: useCallback(() => setTick((t) => t + 1), []) };
}

/** A button that runs an action, shows it is busy, and reports its failure beside it. */
export function Action({ label, run, confirm, disabled }: { label: string; run: () => Promise<unknown>; confirm?: string; disabled?: boolean }) {
  const [busy, setBusy] = useState(false);
  const [armed, setArmed] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const click = async () => {
    if (confirm && !armed) return setArmed(true);
    setArmed(false);
    setBusy(true);
    setError(null);
    try {
      await run();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="action">
      <button type="button" onClick={click} disabled={busy || disabled}>
        {armed ? confirm : label}
      </button>
      {error ? <ErrorLine error={error} /> : null}
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
