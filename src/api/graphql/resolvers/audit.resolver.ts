import { Arg, Authorized, Ctx, ID, Int, Query, Resolver, Root, Subscription } from "type-graphql";
import { history, trace } from "../../../audit/history.js";
import { positionFromString } from "../../../infra/eventstore/port.js";
import { validCorrelationId } from "../../services.js";
import type { ApiContext } from "../context.js";
import { badInput } from "../errors.js";
import { HistoryEntry, HistoryEntryConnection } from "../types/audit.type.js";
import { toConnection } from "../types/connection.js";
import { RecordedEvent } from "../types/recorded-event.type.js";
import { auditFeed, type FeedArgs } from "./audit-feed.js";
import { pageSize } from "./paging.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function afterPosition(after: string | null | undefined): bigint | undefined {
  if (!after) return undefined;
  try {
    return positionFromString(after);
  } catch {
    throw badInput("after", `after must be a log position (a decimal string) from an earlier page, got ${JSON.stringify(after)}`);
  }
}

@Resolver(() => HistoryEntry)
export class AuditResolver {
  @Authorized("audit:read")
  @Query(() => HistoryEntryConnection, {
    description:
      "Every event that named the object (device with its deployables and handles, deployable, attach handle, ARQ, profile, instance, bitstream, programming request), across streams, oldest first",
  })
  async history(
    @Ctx() ctx: ApiContext,
    @Arg("uuid", () => ID) uuid: string,
    @Arg("first", () => Int, { nullable: true }) first?: number,
    @Arg("after", () => String, { nullable: true, description: "A position: entries after it" }) after?: string,
  ) {
    const id = uuid.toLowerCase();
    if (!UUID.test(id)) throw badInput("uuid", `${JSON.stringify(uuid)} is not a UUID (a device, deployable, attach handle, ARQ, profile, instance, bitstream or programming request uuid)`);
    return toConnection(await history(ctx.services.auditStore ?? ctx.services.store, ctx.services.readStore, id, pageSize(first), afterPosition(after)));
  }

  @Authorized("audit:read")
  @Query(() => HistoryEntryConnection, {
    description:
      "Everything one request caused, across streams (its correlation id: a HistoryEntry's correlationId, or the X-Correlation-Id you sent). " +
      "A caller chooses its correlation id, so two projects may use one: a trace is one project's, by default the project that used it first",
  })
  async trace(
    @Ctx() ctx: ApiContext,
    @Arg("correlationId", () => String) correlationId: string,
    @Arg("first", () => Int, { nullable: true }) first?: number,
    @Arg("after", () => String, { nullable: true, description: "A position: entries after it" }) after?: string,
    @Arg("project", () => String, { nullable: true, description: "The project whose request it is (a HistoryEntry's project)" }) project?: string,
  ) {
    if (validCorrelationId(correlationId) === undefined) throw badInput("correlationId", "a correlation id is 1 to 128 letters, digits, '_', '.', ':' or '-'");
    return toConnection(await trace(ctx.services.auditStore ?? ctx.services.store, ctx.services.readStore, correlationId, pageSize(first), afterPosition(after), project ?? undefined));
  }

  @Subscription(() => RecordedEvent, {
    name: "events",
    description:
      "The live audit feed (audit:read): events after `after` (the last position you saw; omit to start at the head), then live; " +
      "resume with the last position after a disconnect: no gap, no duplicate",
    subscribe: ({ args, context }) => auditFeed(context as ApiContext, args as FeedArgs),
  })
  eventFeed(
    @Root() event: RecordedEvent,
    @Arg("types", () => [String], { nullable: true }) _types?: string[],
    @Arg("streamPrefix", () => String, { nullable: true }) _streamPrefix?: string,
    @Arg("after", () => String, { nullable: true }) _after?: string,
  ): RecordedEvent {
    return event;
  }
}
