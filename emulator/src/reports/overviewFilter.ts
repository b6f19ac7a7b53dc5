import { DomainOverview, type OverviewFilter, type OverviewFilterOperator } from "pulumi-dmarc-partner/api";
import { unprocessable } from "../errors";

// The overview's filters: a field of the answer compared with a value, or
// conditions joined with AND / OR. A list of conditions must all hold.

type Compare = (actual: unknown, expected: unknown) => boolean;

const numbers =
  (test: (a: number, b: number) => boolean): Compare =>
  (actual, expected) =>
    typeof actual === "number" && typeof expected === "number" && test(actual, expected);

const strings =
  (test: (a: string, b: string) => boolean): Compare =>
  (actual, expected) =>
    typeof actual === "string" && typeof expected === "string" && test(actual, expected);

const COMPARISONS: Record<OverviewFilterOperator, Compare> = {
  eq: (actual, expected) => actual === expected,
  neq: (actual, expected) => actual !== expected,
  in: (actual, expected) => Array.isArray(expected) && expected.includes(actual),
  nin: (actual, expected) => Array.isArray(expected) && !expected.includes(actual),
  gt: numbers((a, b) => a > b),
  gte: numbers((a, b) => a >= b),
  lt: numbers((a, b) => a < b),
  lte: numbers((a, b) => a <= b),
  starts_with: strings((a, b) => a.startsWith(b)),
  ends_with: strings((a, b) => a.endsWith(b)),
  contains: strings((a, b) => a.includes(b)),
};

const FIELDS = new Set(Object.keys(DomainOverview.shape));

type Filters = OverviewFilter | OverviewFilter[] | undefined;

/** Refuses a condition on a field the overview does not have: it would silently match nothing. */
export function checkFilters(filters: Filters): void {
  for (const filter of [filters ?? []].flat()) {
    if ("conditions" in filter) checkFilters(filter.conditions);
    else if (!FIELDS.has(filter.field)) {
      const allowed = [...FIELDS].join(", ");
      throw unprocessable("filters", `cannot filter on "${filter.field}": use one of ${allowed}`, "unknown_field");
    }
  }
}

export function matches(view: DomainOverview, filters: Filters): boolean {
  return [filters ?? []].flat().every((filter) => {
    if ("conditions" in filter) {
      const results = filter.conditions.map((condition) => matches(view, condition));
      return filter.operator === "AND" ? results.every(Boolean) : results.some(Boolean);
    }
    return COMPARISONS[filter.operator]((view as Record<string, unknown>)[filter.field], filter.value);
  });
}
