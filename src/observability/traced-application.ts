/** The command handlers, each in a span (with tracing on): the step between the request and its appends. */
import type { Application } from "../app/application.js";
import { CORRELATION_ATTRIBUTE, inSpan, type Tracing } from "./tracing.js";

export function traceApplication(app: Application, tracing: Tracing | undefined): Application {
  if (!tracing) return app;
  return new Proxy(app, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== "function" || typeof prop !== "string") return value;
      return (...args: unknown[]) => {
        // Commands take a CommandContext first: who, and the request's correlation id.
        const ctx = args[0] as { correlationId?: unknown; principal?: unknown } | undefined;
        const attributes = () =>
          typeof ctx?.correlationId === "string" ? { [CORRELATION_ATTRIBUTE]: ctx.correlationId, "cyborg.principal": String(ctx.principal) } : {};
        const correlationId = typeof ctx?.correlationId === "string" ? ctx.correlationId : undefined;
        return inSpan(tracing, `app.${prop}`, attributes, async () => (value as (...a: unknown[]) => unknown).apply(target, args), { correlationId });
      };
    },
  });
}
