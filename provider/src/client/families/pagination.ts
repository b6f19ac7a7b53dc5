import { type ListMeta, MAX_PAGE_SIZE } from "../../api";
import { type CallContext, DmarcResponseError } from "../errors";

// Lists come in pages; callers want the whole list.

export const PAGE_SIZE = MAX_PAGE_SIZE;

/** A service that keeps saying "there is more" must not keep a deployment busy forever. */
const MAX_PAGES = 10_000;

export interface Page<T> {
  data: T[];
  meta?: ListMeta | undefined;
}

/**
 * Whether a page after `page` exists, from the strongest sign the meta gives:
 * `hasNextPage`, then `pageCount`, then `total` against the items seen so far.
 * A list without any of them ends at the first page shorter than asked for
 * (the description requires no meta field on most lists).
 */
function hasMore(current: Page<unknown>, page: number, seen: number, pageSize: number): boolean {
  const meta = current.meta ?? {};
  if (current.data.length === 0) return false;
  if (meta.hasNextPage !== undefined) return meta.hasNextPage;
  if (meta.pageCount !== undefined) return page < meta.pageCount;
  if (meta.total !== undefined) return seen < meta.total;
  return current.data.length >= pageSize;
}

/**
 * Fetches pages from `firstPage` until the service says there are no more.
 * Items are keyed so that one shifted into the next page by a concurrent
 * insert is not listed twice.
 */
export async function collectPages<T>(
  context: CallContext,
  fetchPage: (page: number) => Promise<Page<T>>,
  keyOf: (item: T) => string,
  firstPage: Page<T> | undefined = undefined,
  pageSize = PAGE_SIZE,
): Promise<T[]> {
  const items = new Map<string, T>();
  let current = firstPage ?? (await fetchPage(1));
  let seen = 0;
  for (let page = 1; ; page++) {
    for (const item of current.data) items.set(keyOf(item), item);
    seen += current.data.length;
    if (!hasMore(current, page, seen, pageSize)) return [...items.values()];
    if (page >= MAX_PAGES) {
      throw new DmarcResponseError(
        context,
        200,
        `more than ${MAX_PAGES} pages`,
        "the service keeps reporting another page; report the call to the service.",
      );
    }
    current = await fetchPage(page + 1);
  }
}
