import type { Stack } from "@pulumi/pulumi/automation";

// What the Automation API of the @pulumi/pulumi the project installed can do.
// The package accepts older releases than the fleet's day-two commands need;
// where one lacks an option, a command that depends on it must not silently
// run without it (an `up` without `exclude` would delete a tenant whose
// offboarding was refused).

/** The first @pulumi/pulumi whose Automation API passes `exclude` to the engine. */
const EXCLUDE_SINCE = "3.165.0";

function installedVersion(): string {
  return (require("@pulumi/pulumi/package.json") as { version: string }).version;
}

function atLeast(version: string, minimum: string): boolean {
  const parts = (text: string) => text.split(/[.-]/).slice(0, 3).map(Number);
  const [have, need] = [parts(version), parts(minimum)];
  for (let index = 0; index < 3; index++) {
    const difference = (have[index] ?? 0) - (need[index] ?? 0);
    if (difference !== 0) return difference > 0;
  }
  return true;
}

/** Whether `up` and `preview` can leave resources out of the operation; undefined when they can, else why not. */
export function excludeUnsupported(version: string = installedVersion()): string | undefined {
  return atLeast(version, EXCLUDE_SINCE)
    ? undefined
    : `@pulumi/pulumi ${version} cannot leave a tenant out of a run (${EXCLUDE_SINCE} or later can)`;
}

/** A refresh in preview mode, which writes no state; an error naming the upgrade when the installed SDK has none. */
export function previewRefreshOf(stack: Stack): NonNullable<Stack["previewRefresh"]> {
  if (typeof stack.previewRefresh !== "function")
    throw new Error(
      `@pulumi/pulumi ${installedVersion()} has no refresh in preview mode (Stack.previewRefresh): upgrade it to run drift`,
    );
  return stack.previewRefresh.bind(stack);
}
