// Sign in with an API key (kept for this tab) or with email and password (a token pair).
import { html, useState } from '../vendor/preact-htm.js';
import { ApiError, signInWithKey, signInWithPassword } from '../lib/api.js';
import { humanError } from '../lib/errors.js';
import { useTitle } from '../lib/ui.js';

export function SignIn({ notice, onSignedIn }) {
  const [mode, setMode] = useState('api_key');
  const [error, setError] = useState(notice ?? '');
  const [busy, setBusy] = useState(false);
  useTitle('Sign in');

  const submit = async (e) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError('');
    try {
      onSignedIn(mode === 'api_key' ? await signInWithKey(form.get('key')) : await signInWithPassword(form.get('email'), form.get('password')));
    } catch (err) {
      const refused = err instanceof ApiError && err.status === 401;
      setError(refused ? (mode === 'api_key' ? 'That API key is not valid. Check it and try again.' : 'The email or the password is wrong.') : humanError(err));
    } finally {
      setBusy(false);
    }
  };

  return html`
    <section class="signin card">
      <h1>Sign in</h1>
      <div class="tabs">
        <button type="button" class=${mode === 'api_key' ? 'active' : ''} aria-pressed=${String(mode === 'api_key')} onClick=${() => setMode('api_key')}>API key</button>
        <button type="button" class=${mode === 'password' ? 'active' : ''} aria-pressed=${String(mode === 'password')} onClick=${() => setMode('password')}>Email and password</button>
      </div>
      <form onSubmit=${submit}>
        ${mode === 'api_key'
          ? html`<label>API key <input name="key" type="password" autocomplete="off" required /></label>`
          : html`
              <label>Email <input name="email" type="email" autocomplete="username" required /></label>
              <label>Password <input name="password" type="password" autocomplete="current-password" required /></label>
            `}
        <button type="submit" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button>
      </form>
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </section>
  `;
}
