import { Field, Int, ObjectType, type ClassType } from "type-graphql";

@ObjectType("PageInfo")
export class PageInfo {
  @Field(() => Boolean) hasNextPage!: boolean;
  @Field(() => String, { nullable: true }) endCursor!: string | null;
}

import type { Page } from "../../../../projections/shared/page.js";

/** A Relay-style connection type named `<Name>Connection` with `<Name>Edge` edges and `nodes`. */
export function Connection<T extends object>(name: string, node: ClassType<T>) {
  @ObjectType(`${name}Edge`)
  class Edge {
    @Field(() => String) cursor!: string;
    @Field(() => node) node!: T;
  }

  @ObjectType(`${name}Connection`)
  class Conn {
    @Field(() => [Edge]) edges!: Edge[];
    @Field(() => [node], { description: "The nodes of the edges, as a shortcut" }) nodes!: T[];
    @Field(() => PageInfo) pageInfo!: PageInfo;
    @Field(() => Int) totalCount!: number;
  }
  return Conn;
}

/** Shape a page of items into the connection object every connection type accepts. */
export function toConnection<T>(page: Page<T>) {
  return {
    edges: page.items.map((node, i) => ({ cursor: page.cursors[i]!, node })),
    nodes: page.items,
    pageInfo: { hasNextPage: page.hasNextPage, endCursor: page.cursors.at(-1) ?? null },
    totalCount: page.totalCount,
  };
}
