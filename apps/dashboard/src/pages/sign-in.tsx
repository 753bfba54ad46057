import { useState } from 'preact/hooks';
import { ApiError, getJson, readKey } from '../api';

/** Asks for a read key, checks it against the API, and keeps it in session storage (gone when the tab closes). */
export function SignIn({ notice, onSignedIn }: { notice: string | null; onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [checking, setChecking] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (checking) return;
    const candidate = key.trim();
    if (candidate === '') {
      setError('Enter a read key.');
      return;
    }
    setChecking(true);
    setError(null);
    try {
      const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
      await getJson('/api/v1/reports/retry-waste', { from: hourAgo }, candidate);
      readKey.set(candidate);
      onSignedIn();
    } catch (failure) {
      const status = failure instanceof ApiError ? failure.status : 0;
      setError(
        status === 401
          ? 'Errata does not know this key. Check that you copied all of it.'
          : status === 403
            ? 'This key cannot read reports: use a key with the read scope.'
            : failure instanceof ApiError
              ? failure.message
              : String(failure),
      );
    } finally {
      setChecking(false);
    }
  };
  return (
    <section class="sign-in" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in to Errata</h1>
      {notice && (
        <p class="warning" role="status">
          {notice}
        </p>
      )}
      <form onSubmit={submit} noValidate>
        <label for="read-key">Read key</label>
        <input
          id="read-key"
          name="read-key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          aria-invalid={error !== null}
          aria-describedby="read-key-help read-key-error"
          autoFocus
        />
        <p id="read-key-help" class="muted">
          A key with the <code>read</code> scope: the one Errata printed at first start,{' '}
          <code>ERRATA_READ_KEY</code>, or one made with{' '}
          <code>npm run errata -- keys create --project default --scope read</code>. It is kept in this tab's
          session storage only.
        </p>
        <p id="read-key-error" class="error-message" role="alert">
          {error}
        </p>
        {/* aria-disabled, not disabled: a disabled button loses focus, and a keyboard user would start again from the
            top of the page. */}
        <button type="submit" aria-disabled={checking}>
          {checking ? 'Checking…' : 'Sign in'}
        </button>
      </form>
    </section>
  );
}
