/** What every page shares: the signed-in session, and how an error is shown. */
import { ApiError, type Viewer } from "./api";

export interface Session {
  token: string;
  viewer: Viewer;
  can(rule: string): boolean;
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const code = error instanceof ApiError ? error.code : undefined;
  return (
    <p className="error" role="alert">
      {code ? <strong>{code}: </strong> : null}
      {(error as Error).message}
    </p>
  );
}
