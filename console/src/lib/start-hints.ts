/**
 * What the service tells a newcomer before sign-in (GET /console/config.json, no token needed):
 * the command that prints the admin token of an embedded service's DATA_DIR. A production service
 * tells nothing; its operator hands out tokens.
 */
export interface StartHints {
  adminTokenCommand?: string;
}

export async function startHints(): Promise<StartHints> {
  try {
    const res = await fetch(`${location.origin}/console/config.json`);
    return res.ok ? ((await res.json()) as StartHints) : {};
  } catch {
    return {};
  }
}
