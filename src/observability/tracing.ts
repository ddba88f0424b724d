/**
 * OpenTelemetry traces, off unless the standard OTEL_* variables ask for them: an OTLP endpoint
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER=otlp;
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn them off. The SDK reads the rest itself
 * (OTEL_TRACES_SAMPLER / _ARG, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*,
 * OTEL_EXPORTER_OTLP_HEADERS). When off, nothing of the SDK is loaded and every seam takes a plain
 * branch (`tracing === undefined`).
 *
 * One trace follows a request: the HTTP request (named after the GraphQL operation), the command
 * handler, the append; the events carry the command's `traceparent` in their metadata, so the
 * projection and the accelerator-request-bound notification join the same trace. Every span has
 * `cyborg.correlation_id`, the id the audit log records (`streamHistory` shows it in each event's
 * metadata); without an X-Correlation-Id header the correlation id is the trace id.
 *
 * The correlation id is also how a span finds its parent: the seams already carry it (the GraphQL
 * context, a command's context, an event's metadata), so a sampled request's open spans are kept
 * by correlation id and no async context is needed. The SDK's context manager (AsyncLocalStorage,
 * whose promise hooks cost every promise of the process about 5% of its CPU on Node 20 once used)
 * is never installed. Concurrent requests that send the same X-Correlation-Id share one parent.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from "@opentelemetry/api";

export const CORRELATION_ATTRIBUTE = "cyborg.correlation_id";

export interface Tracing {
  readonly tracer: Tracer;
  /** The innermost open recording span of the request with this correlation id. */
  current(correlationId: string | undefined): Span | undefined;
  /** The W3C traceparent of that span, for the metadata of the events it writes. */
  traceparent(correlationId: string | undefined): string | undefined;
  /** The context a traceparent names (the parent of spans that continue its trace). */
  contextOf(traceparent: string | undefined): Context;
  /** The context an incoming request's headers carry (traceparent, tracestate). */
  extract(headers: Record<string, string | string[] | undefined>): Context;
  /** Flushes the spans not yet exported. */
  close(): Promise<void>;
  /** @internal inSpan's bookkeeping of open spans by correlation id. */
  readonly open: Map<string, Span[]>;
}

export function tracingConfigured(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === "true") return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "").split(",").map((s) => s.trim());
  if (exporters.includes("none")) return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || exporters.includes("otlp"));
}

/** The SDK with a batching OTLP/HTTP exporter, or undefined when tracing is not configured. */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<Tracing | undefined> {
  if (!tracingConfigured(env)) return undefined;
  // CommonJS packages: their exports are the module's default, in node and in the server's bundle alike
  // (the bundle gives no named exports for them).
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, resources, { W3CTraceContextPropagator }] = await Promise.all([
    import("@opentelemetry/sdk-trace-node").then((m) => m.default),
    import("@opentelemetry/exporter-trace-otlp-http").then((m) => m.default),
    import("@opentelemetry/resources").then((m) => m.default),
    import("@opentelemetry/core").then((m) => m.default),
  ]);
  const resource = resources.resourceFromAttributes({ "service.name": "cyborg-es" }).merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  const propagator = new W3CTraceContextPropagator();
  const getter = {
    get: (c: Record<string, string | string[] | undefined>, k: string) => c[k],
    keys: (c: Record<string, unknown>) => Object.keys(c),
  };
  const open = new Map<string, Span[]>();
  const current = (correlationId: string | undefined) => (correlationId === undefined ? undefined : open.get(correlationId)?.at(-1));
  return {
    tracer: provider.getTracer("cyborg-es"),
    open,
    current,
    traceparent(correlationId) {
      const span = current(correlationId);
      if (!span) return undefined;
      const { traceId, spanId } = span.spanContext();
      return `00-${traceId}-${spanId}-01`;
    },
    contextOf: (traceparent) => (traceparent ? propagator.extract(ROOT_CONTEXT, { traceparent }, getter) : ROOT_CONTEXT),
    extract: (headers) => propagator.extract(ROOT_CONTEXT, headers, getter),
    close: () => provider.shutdown(),
  };
}

/**
 * Runs `fn` inside a span, ended when `fn` settles; a thrown error marks it failed. Without
 * tracing, it only calls `fn`. A `root` (the HTTP request) asks the sampler, under the caller's
 * `parent` context; any other span is a child of the open span of its `correlationId`, and is made
 * only when that one records: the requests the sampler leaves out (99% at 1%) make no span object
 * beyond their root's. While `fn` runs, the span is its correlation id's innermost.
 */
export function inSpan<T>(
  tracing: Tracing | undefined,
  name: string,
  attributes: Attributes | (() => Attributes),
  fn: (span?: Span) => Promise<T>,
  options: { correlationId: string | undefined; parent?: Context; kind?: SpanKind; root?: boolean },
): Promise<T> {
  if (!tracing) return fn();
  const id = options.correlationId;
  const parentSpan = options.root ? undefined : tracing.current(id);
  if (!options.root && !parentSpan) return fn();
  const parent = parentSpan ? trace.setSpan(ROOT_CONTEXT, parentSpan) : (options.parent ?? ROOT_CONTEXT);
  const span = tracing.tracer.startSpan(name, { attributes: typeof attributes === "function" ? attributes() : attributes, kind: options.kind ?? SpanKind.INTERNAL }, parent);
  if (!span.isRecording() || id === undefined) {
    span.end();
    return fn();
  }
  return run(tracing, id, span, fn);
}

/** Runs `fn` with `span` open under `correlationId` (a sampled root's correlation id is known only once it has been sampled). */
export async function run<T>(tracing: Tracing, correlationId: string, span: Span, fn: (span: Span) => Promise<T>): Promise<T> {
  let stack = tracing.open.get(correlationId);
  if (!stack) tracing.open.set(correlationId, (stack = []));
  stack.push(span);
  try {
    return await fn(span);
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
    const at = stack.lastIndexOf(span);
    if (at >= 0) stack.splice(at, 1);
    if (stack.length === 0 && tracing.open.get(correlationId) === stack) tracing.open.delete(correlationId);
  }
}

export function failed(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

export { SpanKind };
