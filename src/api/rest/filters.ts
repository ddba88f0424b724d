/**
 * Cyborg's generic list filter, `filters.field=F&filters.value=V` repeated (FilterType): the field
 * must be one Cyborg knows; `limit` caps the list and `name` selects deployables by name. The
 * others name no column of ours, as most name none of Cyborg's, and are ignored as Cyborg ignores
 * them (lists are in discovery order; marker and sort_* do not apply).
 */
import { badRequest } from "./errors.js";
import type { Query } from "./context.js";

const FIELDS = ["parent_uuid", "root_uuid", "board", "availability", "interface_type", "instance_uuid", "limit", "marker", "sort_key", "sort_dir", "name"];

export interface ListFilters {
  limit?: number;
  name?: string;
}

export function parseFilters(query: Query): ListFilters {
  const fields = query.all("filters.field");
  const values = query.all("filters.value");
  if (fields.length !== values.length) throw badRequest("Each filters.field needs its filters.value, in the same order.", "filters.value");
  const out: ListFilters = {};
  fields.forEach((field, i) => {
    const value = values[i]!;
    if (!FIELDS.includes(field)) throw badRequest(`Invalid filter field ${JSON.stringify(field)}: one of ${FIELDS.join(", ")}.`, "filters.field");
    if (field === "limit") {
      if (!/^\d{1,9}$/.test(value) || Number(value) < 1) throw badRequest(`filters limit must be a positive integer, got ${JSON.stringify(value)}.`, "filters.value");
      out.limit = Number(value);
    } else if (field === "name") out.name = value;
  });
  return out;
}
