import type { ListMeta } from "pulumi-dmarc-partner/api";

/** Page size when the caller names none; the published maximum (100) is enforced by the query schema. */
const DEFAULT_PAGE_SIZE = 20;

interface PageRequest {
  page?: number | undefined;
  limit?: number | undefined;
  pageSize?: number | undefined;
}

/** One page of `items` in the published list envelope; routes name the size `limit` or `pageSize`, both are accepted. */
export function paginate<T>(items: T[], request: PageRequest): { data: T[]; meta: ListMeta } {
  const limit = request.limit ?? request.pageSize ?? DEFAULT_PAGE_SIZE;
  const page = request.page ?? 1;
  const pageCount = Math.ceil(items.length / limit);
  return {
    data: items.slice((page - 1) * limit, page * limit),
    meta: {
      total: items.length,
      limit,
      page,
      pageCount,
      hasPreviousPage: page > 1,
      hasNextPage: page < pageCount,
    },
  };
}
