/**
 * OpenTelemetry traces, off unless the standard OTEL_* variables ask for them: an OTLP endpoint
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER=otlp;
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn them off. The SDK reads the rest itself
 * (OTEL_TRACES_SAMPLER / _ARG, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*,
 * OTEL_EXPORTER_OTLP_HEADERS). When off, nothing of the SDK is loaded and every seam takes a plain
 * branch (`tracing === undefined`): no span objects, no context manager.
 *
 * One trace follows a request: the HTTP request (named after the GraphQL operation), the command
 * handler, the append; the events carry the command's `traceparent` in their metadata, so the
 * projection and the accelerator-request-bound notification join the same trace. Every span has
 * `cyborg.correlation_id`, the id the audit log records (`streamHistory` shows it in each event's
 * metadata); without an X-Correlation-Id header the correlation id is the trace id.
 */
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from "@opentelemetry/api";

export const CORRELATION_ATTRIBUTE = "cyborg.correlation_id";

export interface Tracing {
  readonly tracer: Tracer;
  /** The W3C traceparent of the context's span (the active one by default), when it is sampled. */
  traceparent(ctx?: Context): string | undefined;
  /** The context a traceparent names (the parent of spans that continue its trace). */
  contextOf(traceparent: string | undefined): Context;
  /** The context an incoming request's headers carry (traceparent, tracestate). */
  extract(headers: Record<string, string | string[] | undefined>): Context;
  /** Flushes the spans not yet exported. */
  close(): Promise<void>;
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
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, resources, { W3CTraceContextPropagator }, { AsyncLocalStorageContextManager }] =
    await Promise.all([
      import("@opentelemetry/sdk-trace-node"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/resources"),
      import("@opentelemetry/core"),
      import("@opentelemetry/context-async-hooks"),
    ]);
  // Once per process (a second service in the same process, as in tests, finds it set).
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const resource = resources.resourceFromAttributes({ "service.name": "cyborg-es" }).merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  const propagator = new W3CTraceContextPropagator();
  const getter = {
    get: (c: Record<string, string | string[] | undefined>, k: string) => c[k],
    keys: (c: Record<string, unknown>) => Object.keys(c),
  };
  return {
    tracer: provider.getTracer("cyborg-es"),
    traceparent(ctx = context.active()) {
      const span = trace.getSpan(ctx);
      if (!span?.isRecording()) return undefined;
      const { traceId, spanId } = span.spanContext();
      return `00-${traceId}-${spanId}-01`;
    },
    contextOf: (traceparent) => (traceparent ? propagator.extract(ROOT_CONTEXT, { traceparent }, getter) : ROOT_CONTEXT),
    extract: (headers) => propagator.extract(ROOT_CONTEXT, headers, getter),
    close: () => provider.shutdown(),
  };
}

/**
 * Runs `fn` inside a span (a child of `parent`, or of the active span), ended when `fn` settles;
 * a thrown error marks it failed. Without tracing, it only calls `fn`. So does it outside a sampled
 * trace: a span that is not a `root` is made only under a recording parent, and a root the sampler
 * drops sets no context, so the requests the sampler leaves out (99% at 1%) make no span objects
 * and enter no async context beyond the root's sampling decision.
 */
export function inSpan<T>(
  tracing: Tracing | undefined,
  name: string,
  attributes: Attributes | (() => Attributes),
  fn: (span?: Span) => Promise<T>,
  options: { parent?: Context; kind?: SpanKind; root?: boolean } = {},
): Promise<T> {
  if (!tracing) return fn();
  const parent = options.parent ?? context.active();
  if (!options.root && !trace.getSpan(parent)?.isRecording()) return fn();
  const span = tracing.tracer.startSpan(name, { attributes: typeof attributes === "function" ? attributes() : attributes, kind: options.kind ?? SpanKind.INTERNAL }, parent);
  if (!span.isRecording()) {
    span.end();
    return fn();
  }
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await fn(span);
    } catch (err) {
      failed(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

export function failed(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** The active span's trace id (for a correlation id), when a sampled span is active. */
export function activeTraceId(tracing: Tracing | undefined): string | undefined {
  if (!tracing) return undefined;
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span.spanContext().traceId : undefined;
}

export { SpanKind };
