// Log in to a controller with its admin password (docs/firmware-visual-token.md). The password goes
// to the configurator's server, which asks the controller for a visual-token and keeps it for this
// browser only; the password is kept nowhere. A throttled controller's answer is shown as it says
// it ("Too many failed attempts: try again in 30 s").
import { useId, useState } from 'preact/hooks';
import { ApiError, errorText } from '../../../../web-common/browser/api-client.ts';
import { ActionForm, Button } from '../../../../web-common/browser/fields.tsx';
import { useAction } from '../../../../web-common/browser/hooks.ts';
import { api } from '../api.ts';
import { Message } from './ui.tsx';

/** The server's message; for a throttled log-in, when to try again if the message does not say. */
function loginError(err: unknown): string {
  const text = errorText(err);
  const retry = err instanceof ApiError ? Number(err.details.retry_after_seconds) : NaN;
  return text + (err instanceof ApiError && err.status === 429 && Number.isFinite(retry) && !text.includes(' s') ? ` (try again in ${retry} s)` : '');
}

export function LoginForm({ id, name, onLoggedIn }: { id: number; name: string; onLoggedIn: () => void }) {
  const [password, setPassword] = useState('');
  const action = useAction(loginError);
  const field = useId();
  const login = async () => {
    await api.login({ id, body: { password } });
    setPassword('');
    onLoggedIn();
  };
  return (
    <ActionForm class="login" action={action} run={login} aria-label={`Log in to ${name}`}>
      <div class="field">
        <label for={field}>Admin password of {name}</label>
        <input id={field} type="password" autocomplete="current-password" value={password} required onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)} />
      </div>
      <Button type="submit" busy={action.busy}>
        Log in
      </Button>
      <Message outcome={action.outcome} testId="login-message" />
    </ActionForm>
  );
}
