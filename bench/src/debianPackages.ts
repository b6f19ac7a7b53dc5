import { runProcess } from "./processes";

// The servers and the browser the tests and the bench run are Debian's
// packages, installed here when missing: a fresh machine needs no step
// by hand.

/**
 * Installs `packages` with apt-get (the package lists refreshed once when
 * the first try fails) unless `present` already holds; answers why they are
 * still missing, or undefined once `present` holds.
 */
export async function installedOrWhyNot(
  packages: readonly string[],
  present: () => string[],
): Promise<string | undefined> {
  if (present().length === 0) return undefined;
  const install = () =>
    runProcess("apt-get", ["install", "-y", "--no-install-recommends", "-o", "DPkg::Lock::Timeout=300", ...packages], {
      env: { DEBIAN_FRONTEND: "noninteractive" },
      timeoutMs: 900_000,
    });
  try {
    await install().catch(async () => {
      await runProcess("apt-get", ["update"], { timeoutMs: 600_000 });
      await install();
    });
  } catch (error) {
    return `apt-get could not install ${packages.join(", ")}: ${(error as Error).message.split("\n")[0]}`;
  }
  const missing = present();
  return missing.length === 0 ? undefined : `${missing.join(", ")} missing after apt-get install`;
}
