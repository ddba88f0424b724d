/**
 * A read of $all with a server-side filter. EventStoreDB's gRPC Read call takes a filter on reads of
 * $all as on subscriptions (the server's filtered reads: AllReader.FilteredReadAllEventsForward and
 * ...Backward), but @eventstore/db-client 6.2.1 only sets one on subscribeToAll. This builds the same
 * request as the client's own readAll (dist/streams/readAll.js), with the filter options its
 * subscribeToAll builds (dist/streams/subscribeToAll.js), and reads the answer with the client's
 * ReadStream. It uses two protected members of the client (its gRPC stream factory and call
 * arguments), so a client upgrade must keep this file in step; never run against a real server
 * from these machines (see docs/deployment.md).
 */
import { createRequire } from "node:module";
import {
  BACKWARDS,
  EVENT_TYPE,
  STREAM_NAME,
  type AllStreamResolvedEvent,
  type EventStoreDBClient,
  type Filter,
  type ReadAllOptions,
  type StreamingRead,
} from "@eventstore/db-client";

const require = createRequire(import.meta.url);
type StreamsPb = typeof import("@eventstore/db-client/generated/streams_pb.js");
type SharedPb = typeof import("@eventstore/db-client/generated/shared_pb.js");
type StreamsGrpc = typeof import("@eventstore/db-client/generated/streams_grpc_pb.js");
type ReadStreamModule = typeof import("@eventstore/db-client/dist/streams/utils/ReadStream.js");
type UtilsModule = typeof import("@eventstore/db-client/dist/utils/index.js");

const pb = require("@eventstore/db-client/generated/streams_pb.js") as StreamsPb;
const shared = require("@eventstore/db-client/generated/shared_pb.js") as SharedPb;
const grpc = require("@eventstore/db-client/generated/streams_grpc_pb.js") as StreamsGrpc;
const { ReadStream } = require("@eventstore/db-client/dist/streams/utils/ReadStream.js") as ReadStreamModule;
const { convertGrpcEvent } = require("@eventstore/db-client/dist/utils/index.js") as UtilsModule;

type ReadReqOptions = InstanceType<StreamsPb["ReadReq"]["Options"]>;

function allOptions(fromPosition: ReadAllOptions["fromPosition"]): InstanceType<StreamsPb["ReadReq"]["Options"]["AllOptions"]> {
  const all = new pb.ReadReq.Options.AllOptions();
  if (fromPosition === undefined || fromPosition === "start") all.setStart(new shared.Empty());
  else if (fromPosition === "end") all.setEnd(new shared.Empty());
  else {
    const pos = new pb.ReadReq.Options.Position();
    pos.setCommitPosition(fromPosition.commit.toString(10));
    pos.setPreparePosition(fromPosition.prepare.toString(10));
    all.setPosition(pos);
  }
  return all;
}

function filterOptions(filter: Filter): InstanceType<StreamsPb["ReadReq"]["Options"]["FilterOptions"]> {
  const expr = new pb.ReadReq.Options.FilterOptions.Expression();
  if ("prefixes" in filter) expr.setPrefixList(filter.prefixes);
  if ("regex" in filter) expr.setRegex(filter.regex);
  const options = new pb.ReadReq.Options.FilterOptions();
  if (filter.filterOn === STREAM_NAME) options.setStreamIdentifier(expr);
  else if (filter.filterOn === EVENT_TYPE) options.setEventType(expr);
  if (typeof filter.maxSearchWindow === "number") options.setMax(filter.maxSearchWindow);
  else options.setCount(new shared.Empty());
  options.setCheckpointintervalmultiplier(filter.checkpointInterval);
  return options;
}

export function filteredReadAll(client: EventStoreDBClient, filter: Filter, options: ReadAllOptions): StreamingRead<AllStreamResolvedEvent> {
  const { maxCount = Number.MAX_SAFE_INTEGER, fromPosition, direction, resolveLinkTos = false, ...baseOptions } = options;
  const req = new pb.ReadReq();
  const o: ReadReqOptions = new pb.ReadReq.Options();
  const uuid = new pb.ReadReq.Options.UUIDOption();
  uuid.setString(new shared.Empty());
  o.setAll(allOptions(fromPosition));
  o.setResolveLinks(resolveLinkTos);
  o.setCount(maxCount.toString(10));
  o.setUuidOption(uuid);
  o.setFilter(filterOptions(filter));
  o.setReadDirection(direction === BACKWARDS ? 1 : 0);
  req.setOptions(o);
  // Protected members of the client: the same calls its own readAll makes.
  const creator = client["GRPCStreamCreator"];
  const callArguments = client["callArguments"];
  const create = creator(grpc.StreamsClient, "readAll", (c) => c.read(req, ...callArguments(baseOptions, { deadline: Infinity })));
  return new ReadStream(create, convertGrpcEvent, {}) as unknown as StreamingRead<AllStreamResolvedEvent>;
}
