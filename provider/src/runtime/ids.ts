// Our resource ids for objects the service addresses within their organisation.

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
