import { OutcomeUnknownError } from "../client";

/**
 * Runs a create whose answer may be lost. When the client reports that the
 * outcome is unknown, `find` looks for the object the call may have made:
 * found, it is adopted; not found, the call provably made nothing and is sent
 * once more. Either way no duplicate is created.
 */
export async function createOrAdopt<T>(create: () => Promise<T>, find: () => Promise<T | undefined>): Promise<T> {
  try {
    return await create();
  } catch (error) {
    if (!(error instanceof OutcomeUnknownError)) throw error;
    const existing = await find();
    if (existing !== undefined) return existing;
    return create();
  }
}

/** Ids of the form `<organizationId>/<child>` for objects addressed within their organisation. */
export function joinId(organizationId: string, child: string): string {
  return `${organizationId}/${child}`;
}

export function splitId(id: string, typeName: string, childLabel: string): { organizationId: string; child: string } {
  const slash = id.indexOf("/");
  if (slash <= 0 || slash === id.length - 1) {
    throw new Error(`${typeName} id "${id}" must look like "<organizationId>/<${childLabel}>"`);
  }
  return { organizationId: id.slice(0, slash), child: id.slice(slash + 1) };
}
