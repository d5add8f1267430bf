// Form fields the project's pages share (docs/web-kit.md): a labelled input, checkbox and select, a
// button that says when it is busy, and a form whose submission is an action. Labels are tied to
// their fields by Preact's useId. Every value is rendered as text (Preact escapes it); nothing is ever
// set as HTML.
import type { ButtonHTMLAttributes, ComponentChildren, FormHTMLAttributes } from 'preact';
import { useId } from 'preact/hooks';
import type { Action } from './hooks.ts';

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
  const id = useId();
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
  const id = useId();
  return (
    <div class="field check">
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange((e.currentTarget as HTMLInputElement).checked)} />
      <label for={id}>{label}</label>
    </div>
  );
}

export function Select({ label, value, options, onValue }: { label: string; value: string; options: readonly (string | [string, string])[]; onValue: (v: string) => void }) {
  const id = useId();
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

export function Button({ children, busy, ...rest }: ButtonHTMLAttributes<HTMLButtonElement> & { busy?: boolean; children: ComponentChildren }) {
  return (
    <button type="button" {...rest} disabled={busy || (rest.disabled as boolean | undefined)} aria-busy={busy ? 'true' : undefined}>
      {children}
    </button>
  );
}

/** A form whose submission runs `run` as `action` (one at a time, its outcome kept); the page stays. */
export function ActionForm({ action, run, children, ...rest }: Omit<FormHTMLAttributes<HTMLFormElement>, 'action' | 'onSubmit'> & { action: Action; run: () => Promise<string | void>; children: ComponentChildren }) {
  return (
    <form
      {...rest}
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(run);
      }}
    >
      {children}
    </form>
  );
}
