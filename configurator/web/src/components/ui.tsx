// Small pieces every page uses: labelled fields, a message line read out by screen readers, the
// busy state of a button, and the hook that runs one action at a time and keeps its outcome.
// Every value is rendered as text (Preact escapes it); nothing is ever set as HTML.
import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { useCallback, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api.ts';

let nextId = 0;
/** A stable id for a label/input pair. */
export function useId(prefix: string): string {
  const ref = useRef<string | undefined>(undefined);
  ref.current ??= `${prefix}-${++nextId}`;
  return ref.current;
}

interface InputProps {
  label: string;
  value: string | number;
  onValue: (v: string) => void;
  hint?: string;
  type?: 'text' | 'number' | 'password';
  required?: boolean;
  maxLength?: number;
  autocomplete?: string;
  inputMode?: 'numeric' | 'text';
}

export function Field({ label, value, onValue, hint, type = 'text', required, maxLength, autocomplete, inputMode }: InputProps) {
  const id = useId('f');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        // Preact's input types are a union per type; one element serves the three here.
        type={type as 'text'}
        value={value}
        required={required}
        maxLength={maxLength}
        autocomplete={autocomplete}
        inputMode={inputMode}
        onInput={(e) => onValue((e.currentTarget as HTMLInputElement).value)}
        aria-describedby={hint ? `${id}-hint` : undefined}
      />
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

export function Check({ label, checked, onChange }: { label: string; checked: boolean; onChange: (v: boolean) => void }) {
  const id = useId('c');
  return (
    <div class="field check">
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange((e.currentTarget as HTMLInputElement).checked)} />
      <label for={id}>{label}</label>
    </div>
  );
}

export function Select({ label, value, options, onValue }: { label: string; value: string; options: readonly (string | [string, string])[]; onValue: (v: string) => void }) {
  const id = useId('s');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onValue((e.currentTarget as HTMLSelectElement).value)}>
        {options.map((o) => {
          const [v, text] = typeof o === 'string' ? [o, o] : o;
          return (
            <option key={v} value={v}>
              {text}
            </option>
          );
        })}
      </select>
    </div>
  );
}

export type Outcome = { kind: 'ok' | 'error' | 'info'; text: string } | null;

/** The outcome of the last action, announced politely (role=status) or assertively for errors. */
export function Message({ outcome, testId }: { outcome: Outcome; testId?: string }) {
  if (!outcome) return null;
  return (
    <p class={`message ${outcome.kind}`} role={outcome.kind === 'error' ? 'alert' : 'status'} data-testid={testId}>
      {outcome.text}
    </p>
  );
}

/** What an error says to a person: the server's message (which names the controller and its answer). */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Runs one action at a time: `busy` while it runs, its outcome (the text the action returns, or the
 * error's message) kept for Message.
 */
export function useAction(): { busy: boolean; outcome: Outcome; setOutcome: (o: Outcome) => void; run: (fn: () => Promise<string | void>) => Promise<boolean> } {
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
      setOutcome({ kind: 'error', text: errorText(err) });
      return false;
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, []);
  return { busy, outcome, setOutcome, run };
}

export function Button({ children, busy, ...rest }: ButtonHTMLAttributes<HTMLButtonElement> & { busy?: boolean; children: ComponentChildren }) {
  return (
    <button type="button" {...rest} disabled={busy || (rest.disabled as boolean | undefined)} aria-busy={busy ? 'true' : undefined}>
      {children}
    </button>
  );
}

/** The first 12 hex digits of an ETag, as people compare them. */
export const shortEtag = (etag: string | null) => (etag ? etag.slice(0, 12) : '—');
