import { copyFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { beforeAll, describe, expect, it } from "vitest";
import { fileStack } from "../../provider/src/checkpoint/fileStack";
import { useEngine } from "../support/engine";
import { fleetProjectFolder, uniqueFleetName } from "./support";

// The fleet's scan reads a file backend's stacks from their files instead
// of one `pulumi stack export` and one `pulumi stack tag ls` each: it must
// read what those answer, and leave to them whatever it cannot read as they do.

beforeAll(async () => {
  await useEngine();
}, 600_000);

describe("a file backend's stack read from its files", () => {
  it("is what stack export and stack tag ls answer, and nothing where the CLI must judge", async () => {
    const projectName = `dmarc-fleet-files-${process.pid}`;
    const project = fleetProjectFolder(projectName);
    writeFileSync(join(project, "Pulumi.yaml"), `name: ${projectName}\nruntime: nodejs\n`);
    const stack = `${uniqueFleetName("files")}-001`;
    const workspace = await LocalWorkspace.create({ workDir: project });
    await workspace.createStack(stack);
    const backend = fileURLToPath(process.env.PULUMI_BACKEND_URL ?? "");
    const checkpoint = join(backend, ".pulumi", "stacks", projectName, `${stack}.json`);
    try {
      // Never tagged: no tags file, so no proof of no marks.
      expect(fileStack(backend, projectName, stack)).toBeUndefined();
      await workspace.setTag(stack, "dmarc-fleet:up", "done 0123456789abcdef at 2026-11-25T09:12:03.417Z");
      const read = fileStack(backend, projectName, stack);
      expect(read?.state).toEqual(await workspace.exportStack(stack));
      expect(read?.tags).toEqual(await workspace.listTags(stack));
      expect(read?.tags["dmarc-fleet:up"]).toBe("done 0123456789abcdef at 2026-11-25T09:12:03.417Z");

      // Attributes a kill cut short: the backend cannot load the stack, and neither does the reader.
      copyFileSync(`${checkpoint}.attrs`, `${checkpoint}.attrs.whole`);
      writeFileSync(`${checkpoint}.attrs`, "");
      expect(fileStack(backend, projectName, stack)).toBeUndefined();
      copyFileSync(`${checkpoint}.attrs.whole`, `${checkpoint}.attrs`);
      rmSync(`${checkpoint}.attrs.whole`);
      expect(fileStack(backend, projectName, stack)).toBeDefined();
    } finally {
      await workspace.removeStack(stack);
    }
  }, 300_000);
});
