/**
 * A small Placement API client (Node's fetch): the microversion header on every request, the
 * token as X-Auth-Token, typed errors (errors.ts), a cap on concurrent requests, and a few quick
 * retries (p-retry) of requests that got no answer or a 5xx. Writes carry the provider generation
 * they were computed from; a stale one is a 409 placement.concurrent_update, which the caller
 * answers by reading again (host-sync.ts). Traits and custom resource classes are created on
 * demand and remembered.
 */
import pRetry, { AbortError } from "p-retry";
import { PlacementRefusedError, PlacementUnavailableError, type PlacementAnswer, type ProviderRef } from "./errors.js";

/**
 * 1.37: re-parenting (a provider found under the wrong parent is moved). It also covers what the
 * sync needs from older ones: nesting (1.14), `required` (1.18), the provider in POST's answer
 * (1.20), error codes (1.23) and reserved = total (1.26).
 */
export const PLACEMENT_MICROVERSION = "1.37";

export interface ProviderRecord {
  uuid: string;
  name: string;
  generation: number;
  parent_provider_uuid: string | null;
  root_provider_uuid: string;
}

export interface InventoryRecord {
  total: number;
  reserved: number;
  min_unit: number;
  max_unit: number;
  step_size: number;
  allocation_ratio: number;
}

export type Inventories = Record<string, InventoryRecord>;

export interface PlacementClientOptions {
  url: string;
  token?: string;
  microversion?: string;
  /** Per request (default 30 s). */
  timeoutMs?: number;
  /** Quick retries of a request that got no answer or a 5xx (default 3, from 100 ms). */
  retries?: number;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** Called after every answer (tests count writes; metrics). */
  onResponse?: (r: { method: string; path: string; status: number; ms: number }) => void;
}

interface RequestOptions {
  body?: unknown;
  /** Statuses that are answers rather than errors (e.g. 404 for "absent"). */
  accept?: readonly number[];
  provider?: ProviderRef;
  signal?: AbortSignal;
}

export class PlacementClient {
  readonly url: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly knownTraits = new Set<string>();
  private readonly knownClasses = new Set<string>();
  private readonly slots: Semaphore;

  constructor(private readonly options: PlacementClientOptions) {
    this.url = options.url.replace(/\/+$/, "");
    this.headers = {
      accept: "application/json",
      "content-type": "application/json",
      "openstack-api-version": `placement ${options.microversion ?? PLACEMENT_MICROVERSION}`,
      ...(options.token ? { "x-auth-token": options.token } : {}),
    };
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.retries = options.retries ?? 3;
    this.slots = new Semaphore(options.concurrency ?? 4);
  }

  async request<T>(method: string, path: string, o: RequestOptions = {}): Promise<{ status: number; body: T }> {
    return pRetry(() => this.once<T>(method, path, o), {
      retries: this.retries,
      minTimeout: 100,
      maxTimeout: 1000,
      randomize: true,
      signal: o.signal,
      shouldRetry: ({ error }) => error instanceof PlacementUnavailableError,
    });
  }

  private async once<T>(method: string, path: string, o: RequestOptions): Promise<{ status: number; body: T }> {
    const release = await this.slots.acquire();
    const t0 = performance.now();
    const answer = (status: number, code: string | null, detail: string): PlacementAnswer => ({ method, path, status, code, detail });
    let res: Response;
    let text: string;
    try {
      const signal = o.signal ? AbortSignal.any([o.signal, AbortSignal.timeout(this.timeoutMs)]) : AbortSignal.timeout(this.timeoutMs);
      res = await fetch(this.url + path, { method, headers: this.headers, body: o.body === undefined ? undefined : JSON.stringify(o.body), signal });
      text = await res.text();
    } catch (err) {
      if (o.signal?.aborted) throw new AbortError(o.signal.reason as Error);
      const e = err as Error & { cause?: { code?: string; message?: string } };
      throw new PlacementUnavailableError(this.url, answer(0, null, `(${e.cause?.code ?? e.cause?.message ?? e.message})`), o.provider);
    } finally {
      release();
    }
    this.options.onResponse?.({ method, path, status: res.status, ms: performance.now() - t0 });
    if (res.ok || o.accept?.includes(res.status)) return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
    const { code, detail } = parseError(text);
    if (res.status >= 500) throw new PlacementUnavailableError(this.url, answer(res.status, code, detail), o.provider);
    throw new PlacementRefusedError(answer(res.status, code, detail), o.provider);
  }

  // ---- resource providers ---------------------------------------------------------------------

  async listProviders(query: Record<string, string>, signal?: AbortSignal): Promise<ProviderRecord[]> {
    const qs = new URLSearchParams(query).toString();
    const { body } = await this.request<{ resource_providers: ProviderRecord[] }>("GET", `/resource_providers${qs ? `?${qs}` : ""}`, { signal });
    return body.resource_providers.map(providerOf);
  }

  async getProvider(uuid: string, signal?: AbortSignal): Promise<ProviderRecord | null> {
    const { status, body } = await this.request<ProviderRecord>("GET", `/resource_providers/${uuid}`, { accept: [404], signal });
    return status === 404 ? null : providerOf(body);
  }

  async createProvider(p: { uuid: string; name: string; parentUuid: string | null }, signal?: AbortSignal): Promise<ProviderRecord> {
    const body = { uuid: p.uuid, name: p.name, ...(p.parentUuid ? { parent_provider_uuid: p.parentUuid } : {}) };
    return providerOf((await this.request<ProviderRecord>("POST", "/resource_providers", { body, provider: p, signal })).body);
  }

  /** Renames and (1.37) re-parents. */
  async updateProvider(p: { uuid: string; name: string; parentUuid: string | null }, signal?: AbortSignal): Promise<ProviderRecord> {
    const body = { name: p.name, parent_provider_uuid: p.parentUuid };
    return providerOf((await this.request<ProviderRecord>("PUT", `/resource_providers/${p.uuid}`, { body, provider: p, signal })).body);
  }

  /** false when it was already gone. A provider with allocations is a 409 placement.resource_provider.inuse. */
  async deleteProvider(p: ProviderRef, signal?: AbortSignal): Promise<boolean> {
    const { status } = await this.request("DELETE", `/resource_providers/${p.uuid}`, { accept: [404], provider: p, signal });
    return status !== 404;
  }

  async getInventories(p: ProviderRef, signal?: AbortSignal): Promise<{ generation: number; inventories: Inventories }> {
    const { body } = await this.request<{ resource_provider_generation: number; inventories: Inventories }>("GET", `/resource_providers/${p.uuid}/inventories`, { provider: p, signal });
    return { generation: body.resource_provider_generation, inventories: body.inventories };
  }

  async putInventories(p: ProviderRef, generation: number, inventories: Inventories, signal?: AbortSignal): Promise<number> {
    for (const rc of Object.keys(inventories)) await this.ensureResourceClass(rc, signal);
    const { body } = await this.request<{ resource_provider_generation: number }>("PUT", `/resource_providers/${p.uuid}/inventories`, {
      body: { resource_provider_generation: generation, inventories },
      provider: p,
      signal,
    });
    return body.resource_provider_generation;
  }

  async getTraits(p: ProviderRef, signal?: AbortSignal): Promise<{ generation: number; traits: string[] }> {
    const { body } = await this.request<{ resource_provider_generation: number; traits: string[] }>("GET", `/resource_providers/${p.uuid}/traits`, { provider: p, signal });
    return { generation: body.resource_provider_generation, traits: body.traits };
  }

  async putTraits(p: ProviderRef, generation: number, traits: readonly string[], signal?: AbortSignal): Promise<number> {
    for (const t of traits) await this.ensureTrait(t, signal);
    const put = () =>
      this.request<{ resource_provider_generation: number }>("PUT", `/resource_providers/${p.uuid}/traits`, {
        body: { resource_provider_generation: generation, traits },
        provider: p,
        signal,
      });
    try {
      return (await put()).body.resource_provider_generation;
    } catch (err) {
      // A custom trait deleted by hand since we created it: create it again, once.
      if (!(err instanceof PlacementRefusedError && err.answer.status === 400 && traits.some((t) => this.knownTraits.has(t)))) throw err;
      for (const t of traits) this.knownTraits.delete(t);
      for (const t of traits) await this.ensureTrait(t, signal);
      return (await put()).body.resource_provider_generation;
    }
  }

  /** Custom traits are created on demand; standard ones (os-traits, e.g. OWNER_CYBORG) exist already. */
  async ensureTrait(name: string, signal?: AbortSignal): Promise<void> {
    if (!name.startsWith("CUSTOM_") || this.knownTraits.has(name)) return;
    await this.request("PUT", `/traits/${encodeURIComponent(name)}`, { signal });
    this.knownTraits.add(name);
  }

  async ensureResourceClass(name: string, signal?: AbortSignal): Promise<void> {
    if (!name.startsWith("CUSTOM_") || this.knownClasses.has(name)) return;
    await this.request("PUT", `/resource_classes/${encodeURIComponent(name)}`, { signal });
    this.knownClasses.add(name);
  }
}

function providerOf(r: ProviderRecord): ProviderRecord {
  return { uuid: r.uuid, name: r.name, generation: r.generation, parent_provider_uuid: r.parent_provider_uuid ?? null, root_provider_uuid: r.root_provider_uuid };
}

/** Placement answers {"errors": [{status, title, detail, code}]} (code from 1.23). */
function parseError(text: string): { code: string | null; detail: string } {
  try {
    const e = (JSON.parse(text) as { errors?: Array<{ code?: string; detail?: string; title?: string }> }).errors?.[0];
    if (e) return { code: e.code ?? null, detail: squash(e.detail ?? e.title ?? "") };
  } catch {
    // not JSON: a proxy's page, say
  }
  return { code: null, detail: squash(text).slice(0, 300) };
}

const squash = (s: string) => s.replace(/\s+/g, " ").trim();

class Semaphore {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  constructor(size: number) {
    this.free = Math.max(1, size);
  }
  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((r) => this.waiting.push(r));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
}
