import { useEffect, useState, type FormEvent } from "react";
import { ErrorNote } from "../lib/session";
import { startHints, type StartHints } from "../lib/start-hints";

export function SignIn({ onSignIn }: { onSignIn(token: string): Promise<void> }) {
  const [token, setToken] = useState("");
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [hints, setHints] = useState<StartHints>();
  useEffect(() => void startHints().then(setHints), []);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await onSignIn(token.trim());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="signin" id="main">
      <h1>cyborg-es console</h1>
      <form onSubmit={submit}>
        <label htmlFor="token">Bearer token</label>
        <input id="token" type="password" autoComplete="off" autoFocus value={token} onChange={(e) => setToken(e.target.value)} required />
        <p className="hint">
          {hints?.adminTokenCommand ? (
            <>
              On the service's machine, <code className="token-command">{hints.adminTokenCommand}</code> prints the admin token.{" "}
            </>
          ) : hints ? (
            <>Ask the service's operator for a token. </>
          ) : null}
          It is kept in this browser's local storage until you sign out.
        </p>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <ErrorNote error={error} />
      </form>
    </main>
  );
}
