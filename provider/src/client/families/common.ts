import { z } from "zod";
import { listOf } from "../../api";
import { isNotFound } from "../errors";
import type { Requester } from "../requester";
import { collectPages, PAGE_SIZE, type Page } from "./pagination";

// How more than one family's routes are called, kept here so that each family
// module holds only its own routes, as ../../api/common.ts holds the wire
// schemas they share.

export const segment = encodeURIComponent;

export function withQuery(path: string, query: Record<string, string | number>): string {
  const search = new URLSearchParams(
    Object.entries(query).map(([key, value]): [string, string] => [key, String(value)]),
  );
  return `${path}?${search}`;
}

export async function unlessNotFound<T>(pending: Promise<T>): Promise<T | undefined> {
  try {
    return await pending;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

export async function deleted(pending: Promise<void>): Promise<boolean> {
  try {
    await pending;
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

// Some list routes answer a plain array, others the paginated envelope.
export async function listArrayOrPages<T>(
  requester: Requester,
  operation: string,
  path: string,
  item: z.ZodType<T>,
  keyOf: (item: T) => string,
): Promise<T[]> {
  const envelope = listOf(item);
  const first = await requester.call({
    operation,
    method: "GET",
    path,
    schema: z.union([z.array(item), envelope]),
    repeatable: true,
  });
  if (Array.isArray(first)) return first;
  return listPages(requester, operation, path, {}, "limit", envelope, keyOf, first);
}

/** Every item of a paged list route; `sizeParameter` is how the route names its page size. */
export function listPages<T>(
  requester: Requester,
  operation: string,
  path: string,
  query: Record<string, string>,
  sizeParameter: "limit" | "pageSize",
  schema: z.ZodType<Page<T>>,
  keyOf: (item: T) => string,
  firstPage?: Page<T>,
): Promise<T[]> {
  return collectPages(
    { operation, method: "GET", path },
    (page) =>
      requester.call({
        operation,
        method: "GET",
        path: withQuery(path, { ...query, page, [sizeParameter]: PAGE_SIZE }),
        schema,
        repeatable: true,
      }),
    keyOf,
    firstPage,
  );
}
