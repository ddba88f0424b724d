/**
 * The headers every file of the site (the console, the GraphQL explorer, their assets) is served
 * with: no other origin may frame the pages or load script into them, and their URLs (which may
 * carry a query) are not sent to other sites as a referrer. Each source below is one that a page
 * was seen to need in Chromium with the policy on (test/console/frame-guard.browser.test.ts).
 */

type Policy = Record<string, string[]>;

/** The console's pages and every asset (a worker script's own response header is its policy). */
const SITE: Policy = {
  "default-src": ["'self'"],
  // Vite's build has no inline script: the pages load modules from /console/assets.
  "script-src": ["'self'"],
  "style-src": ["'self'"],
  "img-src": ["'self'"],
  "font-src": ["'self'"],
  // 'self' matches the same host's ws: too (CSP 3): the subscriptions of the console and explorer.
  "connect-src": ["'self'"],
  // Monaco's language workers, started from /console/assets (no blob: URL in this build).
  "worker-src": ["'self'"],
  "object-src": ["'none'"],
  "base-uri": ["'none'"],
  "form-action": ["'self'"],
  // Neither page frames the other, so nothing may frame them.
  "frame-ancestors": ["'none'"],
};

/**
 * The explorer: Monaco and GraphiQL write <style> elements and style attributes at run time
 * (editor themes, decorations, measured widths), which neither a hash nor a nonce can cover;
 * GraphiQL's stylesheet embeds its fonts as data: URLs, and Monaco draws an error's wavy underline
 * as a data: SVG image. Inline style cannot run script, and with images and fonts kept to this
 * origin and data: URLs (which reach no server) a style cannot send anything elsewhere either.
 */
const EXPLORER: Policy = {
  ...SITE,
  "style-src": ["'self'", "'unsafe-inline'"],
  "img-src": ["'self'", "data:"],
  "font-src": ["'self'", "data:"],
};

const text = (policy: Policy): string =>
  Object.entries(policy)
    .map(([directive, sources]) => `${directive} ${sources.join(" ")}`)
    .join("; ");

export const SITE_POLICY = text(SITE);
export const EXPLORER_POLICY = text(EXPLORER);

/** The headers for the site's file `name` (a path under the site's root). */
export function securityHeaders(name: string): Record<string, string> {
  return {
    "content-security-policy": name === "graphiql.html" ? EXPLORER_POLICY : SITE_POLICY,
    // Browsers without frame-ancestors: the same decision.
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
  };
}
