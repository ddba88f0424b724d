import { useCallback, useEffect, useRef, useState } from "react";

/** Loads with `load`, again every `everyMs` (and on `reload()`), keeping the last good data while reloading. */
export function usePolled<T>(load: () => Promise<T>, everyMs: number, deps: unknown[]) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const loadRef = useRef(load);
  loadRef.current = load;
  const generation = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const d = await loadRef.current();
      if (mine === generation.current) {
        setData(d);
        setError(undefined);
      }
    } catch (err) {
      if (mine === generation.current) setError(err as Error);
    }
  }, []);
  useEffect(() => {
    setData(undefined);
    void reload();
    if (!everyMs) return;
    const t = setInterval(() => document.visibilityState === "visible" && void reload(), everyMs);
    return () => clearInterval(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  return { data, error, reload, setData };
}
