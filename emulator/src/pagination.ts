import type { ListMeta } from "pulumi-dmarc-partner/api";
import { fullMeta, type ListFamily, type WireProfile } from "./profiles";

/** Page size when the caller names none: the description's default for the organisation list. */
const DEFAULT_PAGE_SIZE = 10;

interface PageRequest {
  page?: number | undefined;
  limit?: number | undefined;
  pageSize?: number | undefined;
}

interface Slice<T> {
  data: T[];
  total: number;
  limit: number;
  page: number;
}

function slice<T>(items: T[], request: PageRequest): Slice<T> {
  const limit = request.limit ?? request.pageSize ?? DEFAULT_PAGE_SIZE;
  const page = request.page ?? 1;
  return { data: items.slice((page - 1) * limit, page * limit), total: items.length, limit, page };
}

/** One page of `items` with all six meta fields, as the organisation list always answers; routes name the size `limit` or `pageSize`, both are accepted. */
export function paginate<T>(items: T[], request: PageRequest): { data: T[]; meta: ListMeta } {
  const { data, ...counts } = slice(items, request);
  return { data, meta: fullMeta(counts) };
}

/** One page of a list whose meta the profile spells its own way. */
export function paginateAs<T>(
  profile: WireProfile,
  family: ListFamily,
  items: T[],
  request: PageRequest,
): { data: T[]; meta: Record<string, unknown> } {
  const { data, ...counts } = slice(items, request);
  return { data, meta: profile.listMeta(family, counts) };
}
