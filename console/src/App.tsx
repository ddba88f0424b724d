import { useEffect, useState } from "react";
import { gql, storedToken, storeToken, VIEWER, type Viewer } from "./lib/api";
import type { Session } from "./lib/session";
import { Link, useLocation } from "./lib/router";
import { ArqsPage } from "./pages/Arqs";
import { DevicePage } from "./pages/Device";
import { HealthBadge, HealthPage } from "./pages/Health";
import { HistoryPage } from "./pages/History";
import { HostPage, HostsPage } from "./pages/Hosts";
import { OverviewPage } from "./pages/Overview";
import { ProfilesPage } from "./pages/Profiles";
import { SignIn } from "./pages/SignIn";


const NAV = [
  ["/overview", "Overview"],
  ["/hosts", "Hosts"],
  ["/arqs", "Accelerator requests"],
  ["/profiles", "Device profiles"],
  ["/history", "History"],
  ["/health", "Health"],
] as const;

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const signIn = async (token: string) => {
    const { viewer } = await gql<{ viewer: Viewer }>(token, VIEWER);
    storeToken(token);
    setSession({ token, viewer, can: (rule) => viewer.allows.includes(rule) });
  };
  const signOut = () => {
    storeToken("");
    setSession(null);
  };
  useEffect(() => {
    const token = storedToken();
    if (!token) return setSession(null);
    signIn(token).catch(() => setSession(null));
  }, []);

  if (session === undefined) return <p className="loading">Loading…</p>;
  if (session === null) return <SignIn onSignIn={signIn} />;
  return <Shell session={session} onSignOut={signOut} />;
}

function Shell({ session, onSignOut }: { session: Session; onSignOut(): void }) {
  const loc = useLocation();
  const section = "/" + (loc.path.split("/")[1] ?? "");
  useEffect(() => {
    document.title = `${NAV.find(([p]) => p === section)?.[1] ?? (section === "/devices" ? "Device" : "Overview")} · cyborg-es console`;
  }, [section]);
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">cyborg-es</span>
        <nav aria-label="Sections">
          {NAV.map(([path, label]) => (
            <Link key={path} to={path} aria-current={section === path || (section === "/" && path === "/overview") ? "page" : undefined}>
              {label}
            </Link>
          ))}
        </nav>
        <HealthBadge />
        <span className="who" title={`roles: ${session.viewer.roles.join(", ")}`}>
          {session.viewer.principal} ({session.viewer.roles.join(", ")})
        </span>
        <a href="/graphql" className="explorer">
          GraphQL explorer
        </a>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Page session={session} />
      </main>
    </>
  );
}

function Page({ session }: { session: Session }) {
  const loc = useLocation();
  const [, section, arg] = loc.path.split("/");
  switch (section) {
    case "":
    case "overview":
      return <OverviewPage session={session} />;
    case "hosts":
      return arg ? <HostPage session={session} hostname={decodeURIComponent(arg)} /> : <HostsPage session={session} />;
    case "devices":
      return arg ? <DevicePage session={session} uuid={decodeURIComponent(arg)} /> : <p>Pick a device on its host's page.</p>;
    case "arqs":
      return <ArqsPage session={session} />;
    case "profiles":
      return <ProfilesPage session={session} />;
    case "history":
      return <HistoryPage session={session} stream={loc.query.get("stream") ?? ""} />;
    case "health":
      return <HealthPage />;
    default:
      return <p>No page {loc.path}.</p>;
  }
}

/** An error as the API gave it (its code and message). */
