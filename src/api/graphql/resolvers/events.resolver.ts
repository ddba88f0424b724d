import { Arg, Authorized, Ctx, FieldResolver, Int, Query, Resolver, Root } from "type-graphql";
import { summarize } from "../../../audit/summary.js";
import { positionFromString, positionToString, type RecordedEvent as Stored } from "../../../infra/eventstore/port.js";
import type { ApiContext } from "../context.js";
import { badInput } from "../errors.js";
import { toConnection } from "../types/connection.js";
import { RecordedEvent, RecordedEventConnection } from "../types/recorded-event.type.js";
import { pageSize } from "./paging.js";

const STREAM = /^[A-Za-z][A-Za-z0-9]*-[^\s]{1,300}$/;

/** An event as the RecordedEvent type shows it (positions as decimal strings). */
export const toGraphQL = (e: Stored) => ({ ...e, position: positionToString(e.position), hash: e.hash ?? null, chainVersion: e.chainVersion ?? null });

@Resolver(() => RecordedEvent)
export class EventsResolver {
  @FieldResolver(() => String, { description: 'What happened, to what, by whom, in words: "ARQ … bound to instance … on compute1 (…) by nova (service)"' })
  summary(@Root() e: Pick<Stored, "type" | "data" | "metadata" | "stream">): string {
    return summarize(e);
  }

  @Authorized("audit:read")
  @Query(() => [RecordedEvent], { description: "The history of one stream, e.g. arq-<uuid> or host-<hostname>" })
  async streamHistory(
    @Ctx() ctx: ApiContext,
    @Arg("stream", () => String) stream: string,
    @Arg("fromRevision", () => Int, { nullable: true }) fromRevision?: number,
    @Arg("first", () => Int, { nullable: true }) first?: number,
  ) {
    if (!STREAM.test(stream)) throw badInput("stream", `${JSON.stringify(stream)} is not a stream name such as arq-<uuid>`);
    if (fromRevision !== undefined && fromRevision !== null && fromRevision < 0) {
      throw badInput("fromRevision", "fromRevision must be zero or positive");
    }
    const events = await ctx.services.store.readStream(stream, { fromRevision: fromRevision ?? 0, maxCount: pageSize(first) });
    return events.map(toGraphQL);
  }

  @Authorized("audit:read")
  @Query(() => RecordedEventConnection, { description: "The global log, oldest first; `after` is a position" })
  async events(
    @Ctx() ctx: ApiContext,
    @Arg("after", () => String, { nullable: true }) after?: string,
    @Arg("types", () => [String], { nullable: true }) types?: string[],
    @Arg("first", () => Int, { nullable: true }) first?: number,
  ) {
    let from: bigint | undefined;
    try {
      from = after ? positionFromString(after) : undefined;
    } catch {
      throw badInput("after", `after must be a log position (a decimal string), got ${JSON.stringify(after)}`);
    }
    const size = pageSize(first);
    const filter = types?.length ? { eventTypes: types } : undefined;
    const page = await ctx.services.store.readAll({ after: from, maxCount: size + 1, filter });
    const items = page.slice(0, size).map(toGraphQL);
    return toConnection({
      items,
      cursors: items.map((e) => e.position),
      hasNextPage: page.length > size,
      // The log's size is not known without a scan: totalCount counts this page.
      totalCount: items.length,
    });
  }
}
