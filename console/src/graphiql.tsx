/**
 * The GraphQL explorer at GET /graphql: GraphiQL, bundled from npm (its Monaco editor and workers
 * included), so it works without any network beyond this service. Queries and mutations go over
 * HTTP, subscriptions over graphql-ws, both with the bearer token pasted above the editor (the
 * console's token until one is pasted; the explorer keeps its own, so pasting one here does not
 * change who is signed in to the console). A `?query=` only fills the editor: nothing runs until
 * the run button (or Ctrl-Enter) is pressed here, and a mutation from the link is pointed out.
 */
import "graphiql/setup-workers/vite";
import "graphiql/style.css";
import { createGraphiQLFetcher } from "@graphiql/toolkit";
import { GraphiQL } from "graphiql";
import { Kind, parse } from "graphql";
import { createClient } from "graphql-ws";
import { useMemo, useState } from "react";
import { createRoot } from "react-dom/client";
import { storedToken } from "./lib/api";
import { startHints } from "./lib/start-hints";
import "./graphiql.css";

/** The editor's first text; `tokenCommand` prints the admin token of an embedded service. */
const defaultQuery = (tokenCommand: string | undefined) => `# Paste a token above${tokenCommand ? ` (on the service's machine, ${tokenCommand} prints the admin token)` : ""}.
# Ctrl-Enter runs the operation; the Docs pane lists every type.
{
  viewer { principal roles }
  deviceProfiles { name groups }
  acceleratorRequests(first: 10) { totalCount nodes { uuid state hostname instanceUuid } }
}
`;

const EXPLORER_TOKEN = "cyborg-es.explorer-token";

const linkQuery = new URLSearchParams(location.search).get("query") ?? undefined;

/** Whether `query` holds a mutation (one that does not parse is judged by its words). */
function hasMutation(query: string | undefined): boolean {
  if (!query) return false;
  try {
    return parse(query).definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION && d.operation === "mutation");
  } catch {
    return /\bmutation\b/.test(query);
  }
}
const linkMutation = hasMutation(linkQuery);

function Explorer({ tokenCommand }: { tokenCommand?: string }) {
  const [token, setToken] = useState(() => localStorage.getItem(EXPLORER_TOKEN) ?? storedToken());
  const fetcher = useMemo(() => {
    const authorization = `Bearer ${token}`;
    const url = `${location.origin}/graphql`;
    const wsClient = createClient({ url: url.replace(/^http/, "ws"), connectionParams: { authorization }, lazy: true });
    return createGraphiQLFetcher({ url, headers: token ? { authorization } : {}, wsClient });
  }, [token]);
  return (
    <div className="explorer">
      <form className="tokenbar" onSubmit={(e) => e.preventDefault()}>
        <strong>cyborg-es</strong>
        <label htmlFor="token">Bearer token</label>
        <input
          id="token"
          type="password"
          autoComplete="off"
          value={token}
          placeholder="paste a token"
          onChange={(e) => {
            setToken(e.target.value.trim());
            localStorage.setItem(EXPLORER_TOKEN, e.target.value.trim());
          }}
        />
        <a href="/console/">Console</a>
      </form>
      {linkMutation && (
        <p className="link-mutation" role="alert">
          The link that opened this page put a mutation in the editor. Nothing has run: read it before you press run.
        </p>
      )}
      <div className="graphiql-host">
        <GraphiQL fetcher={fetcher} defaultQuery={defaultQuery(tokenCommand)} initialQuery={linkQuery} />
      </div>
    </div>
  );
}

// GraphiQL reads its default query once: the hint is asked for before the editor is drawn.
void startHints().then((h) => createRoot(document.getElementById("root")!).render(<Explorer tokenCommand={h.adminTokenCommand} />));
