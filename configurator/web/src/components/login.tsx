// Log in to a controller with its admin password (docs/firmware-visual-token.md). The password goes
// to the configurator's server, which asks the controller for a visual-token and keeps it for this
// browser only; the password is kept nowhere. A throttled controller's answer is shown as it says
// it ("Too many failed attempts: try again in 30 s").
import { useState } from 'preact/hooks';
import { api, ApiError } from '../api.ts';
import { Button, errorText, useId, type Outcome, Message } from './ui.tsx';

export function LoginForm({ id, name, onLoggedIn }: { id: number; name: string; onLoggedIn: () => void }) {
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>(null);
  const field = useId('password');
  const submit = async (e: Event) => {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    try {
      await api.login(id, password);
      setPassword('');
      setOutcome(null);
      onLoggedIn();
    } catch (err) {
      const retry = err instanceof ApiError ? Number(err.details.retry_after_seconds) : NaN;
      setOutcome({ kind: 'error', text: errorText(err) + (err instanceof ApiError && err.status === 429 && Number.isFinite(retry) && !errorText(err).includes(' s') ? ` (try again in ${retry} s)` : '') });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="login" onSubmit={submit} aria-label={`Log in to ${name}`}>
      <div class="field">
        <label for={field}>Admin password of {name}</label>
        <input id={field} type="password" autocomplete="current-password" value={password} required onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)} />
      </div>
      <Button type="submit" busy={busy}>
        Log in
      </Button>
      <Message outcome={outcome} testId="login-message" />
    </form>
  );
}
