import "reflect-metadata";
import { printSchema, type GraphQLSchema } from "graphql";
import { buildSchema } from "type-graphql";
import { authChecker } from "./auth-checker.js";
import { withIdempotencyKeys } from "./idempotency.js";
import { withReadYourWrites } from "./read-your-writes.js";
import { withTimeBudget } from "./time-budget.js";
import { AcceleratorRequestResolver } from "./resolvers/accelerator-request.resolver.js";
import { AttachHandleResolver } from "./resolvers/attach-handle.resolver.js";
import { AuditResolver } from "./resolvers/audit.resolver.js";
import { BindOutcomesResolver } from "./resolvers/bind-outcomes.resolver.js";
import { BitstreamResolver } from "./resolvers/bitstream.resolver.js";
import { DeployableResolver } from "./resolvers/deployable.resolver.js";
import { DeviceProfileResolver } from "./resolvers/device-profile.resolver.js";
import { DeviceResolver } from "./resolvers/device.resolver.js";
import { EventsResolver } from "./resolvers/events.resolver.js";
import { InstanceResolver } from "./resolvers/instance.resolver.js";
import { InventoryResolver } from "./resolvers/inventory.resolver.js";
import { ProgrammingResolver } from "./resolvers/programming.resolver.js";
import { ResourceProviderResolver } from "./resolvers/resource-provider.resolver.js";
import { ViewerResolver } from "./resolvers/viewer.resolver.js";
import { QuotaResolver } from "./resolvers/quota.resolver.js";
import { WeigherResolver } from "./resolvers/weigher.resolver.js";
import { PlacementResolver } from "./resolvers/placement.resolver.js";

let cached: Promise<GraphQLSchema> | undefined;

/** The schema is built once per process; `schema/schema.graphql` is its printed form. */
export function getSchema(): Promise<GraphQLSchema> {
  cached ??= buildSchema({
    resolvers: [
      DeviceResolver,
      DeployableResolver,
      AttachHandleResolver,
      DeviceProfileResolver,
      AcceleratorRequestResolver,
      InventoryResolver,
      ResourceProviderResolver,
      EventsResolver,
      AuditResolver,
      BindOutcomesResolver,
      InstanceResolver,
      BitstreamResolver,
      ProgrammingResolver,
      ViewerResolver,
      WeigherResolver,
      QuotaResolver,
      PlacementResolver,
    ],
    authChecker,
    validate: false,
    // Every subscription brings its own `subscribe` (resolvers/bound-events.ts); type-graphql
    // still wants a PubSub, so it gets one that refuses to be used.
    pubSub: {
      publish: () => {
        throw new Error("subscriptions publish through the PubSub port, not type-graphql");
      },
      subscribe: () => {
        throw new Error("subscriptions subscribe through the PubSub port, not type-graphql");
      },
    },
  }).then(withReadYourWrites).then(withIdempotencyKeys).then(withTimeBudget);
  return cached;
}

export async function printedSchema(): Promise<string> {
  return printSchema(await getSchema()) + "\n";
}
