/** A few routes under /console/, in the address bar (back, forward and links that open in a new tab work). */
import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from "react";

export const BASE = "/console";

export interface Location {
  path: string;
  query: URLSearchParams;
}

const current = (): Location => ({ path: location.pathname.slice(BASE.length) || "/", query: new URLSearchParams(location.search) });

export function navigate(to: string) {
  history.pushState(null, "", BASE + to);
  dispatchEvent(new PopStateEvent("popstate"));
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const on = () => setLoc(current());
    addEventListener("popstate", on);
    return () => removeEventListener("popstate", on);
  }, []);
  return loc;
}

export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={BASE + to} onClick={onClick} {...rest} />;
}
