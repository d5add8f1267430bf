// The hooks the project's pages share (docs/web-kit.md): the page's place (the hash router), a load
// that reloads on demand, and an action that runs one at a time and keeps its outcome. Preact's own
// hooks (useId, useState, …) are used where they exist.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from './api-client.ts';

/** The page's place: `location.hash`, followed as it changes (`#/devices`, `#/controllers/3/cloud`). */
export function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

/** Loads with `load` when `deps` change and again on `reload()`; `error` is the last failure. */
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

/** What the last action came to: a sentence to show, or nothing. */
export type Outcome = { kind: 'ok' | 'error' | 'info'; text: string } | null;

export interface Action {
  busy: boolean;
  outcome: Outcome;
  setOutcome: (o: Outcome) => void;
  /** Runs `fn` unless an action of this hook is running; its text (or its error's) becomes the outcome. */
  run: (fn: () => Promise<string | void>) => Promise<boolean>;
}

/** One action at a time: `busy` while it runs; an error is said by `describe` (errorText by default). */
export function useAction(describe: (err: unknown) => string = errorText): Action {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>(null);
  const running = useRef(false);
  const run = useCallback(async (fn: () => Promise<string | void>) => {
    if (running.current) return false;
    running.current = true;
    setBusy(true);
    try {
      const text = await fn();
      setOutcome(text ? { kind: 'ok', text } : null);
      return true;
    } catch (err) {
      setOutcome({ kind: 'error', text: describe(err) });
      return false;
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, []);
  return { busy, outcome, setOutcome, run };
}
