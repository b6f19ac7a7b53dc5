import { pluginTypeName } from "../runtime/typeToken";

/** The type name in a resource's URN (`urn:pulumi:<stack>::<project>::<parent type>$dmarc:index:Domain::<name>`), or undefined for other packages'. */
export function typeNameOfUrn(urn: string): string | undefined {
  return pluginTypeName(urn.split("::")[2]?.split("$").pop() ?? "");
}
