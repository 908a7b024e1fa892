/** Sign in with an API key (exchanged for a session cookie), or redeem an invitation for a first key. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { useAction } from '../hooks';
import { ActionResult } from '../ui/status';

interface Redeemed {
  user: { email: string };
  api_key: string;
}

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [code, setCode] = useState('');
  const [newKey, setNewKey] = useState<string | null>(null);
  const [signIn, doSignIn] = useAction(
    (apiKey: string) => api('/session', { method: 'POST', body: { api_key: apiKey } }),
    () => 'Signed in.',
  );
  const [redeem, doRedeem] = useAction(
    (c: string) => api<Redeemed>('/invitations/redeem', { method: 'POST', body: { code: c } }),
    (r) => `Invitation redeemed for ${r.user.email}. Your API key is shown below, once: keep it somewhere safe.`,
  );
  return (
    <main id="main" class="sign-in">
      <h1>Shopfloor</h1>
      <form
        class="card"
        onSubmit={async (e) => {
          e.preventDefault();
          if (await doSignIn(key.trim())) onSignedIn();
        }}
      >
        <h2>Sign in</h2>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="current-password"
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <button type="submit" disabled={signIn.busy}>
          Sign in
        </button>
        <ActionResult state={{ ...signIn, message: null }} />
      </form>
      <form
        class="card"
        onSubmit={async (e) => {
          e.preventDefault();
          const r = await doRedeem(code.trim());
          if (r) {
            setNewKey(r.api_key);
            setKey(r.api_key);
          }
        }}
      >
        <h2>Have an invitation?</h2>
        <label for="invitation-code">Invitation code</label>
        <input id="invitation-code" required value={code} onInput={(e) => setCode(e.currentTarget.value)} />
        <button type="submit" disabled={redeem.busy}>
          Redeem invitation
        </button>
        <ActionResult state={redeem} />
        {newKey && (
          <p>
            <code class="secret">{newKey}</code> — it is filled in above: press Sign in.
          </p>
        )}
      </form>
    </main>
  );
}
