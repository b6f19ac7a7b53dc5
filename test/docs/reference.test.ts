import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DomainPolicyArgs, resourceDefinitions } from "pulumi-dmarc-partner";
import { describe, expect, it } from "vitest";
import { invokeDefinitions } from "../../provider/src/plugin/invokes";
import { projectRoot } from "../../scripts/project.mjs";
import { REFERENCE_DIR, referencePages } from "../../scripts/reference/index.mjs";
import { tableAfter } from "./markdown";

// docs/resources/ is generated from the schemas (`npm run docs`): a page that
// differs from what the generator makes now is stale, and is named here. The
// pages themselves must say what the definitions say.

const pages = await referencePages();
const pageText = (path: string) => pages.find((page) => page.path === path)?.text ?? "";
const code = (cell: string | undefined) => /^`([^`]*)`$/.exec(cell ?? "")?.[1];

describe("the reference pages in docs/resources", () => {
  it("are what `npm run docs` makes from the schemas now", () => {
    const stale = pages
      .filter((page) => {
        const file = join(projectRoot, page.path);
        return !existsSync(file) || readFileSync(file, "utf8") !== page.text;
      })
      .map((page) => `${page.path} is out of date: run npm run docs`);
    const made = new Set(pages.map((page) => page.path));
    const extra = readdirSync(join(projectRoot, REFERENCE_DIR))
      .map((file) => `${REFERENCE_DIR}/${file}`)
      .filter((path) => path.endsWith(".md") && !made.has(path))
      .map((path) => `${path} is no resource type's page any more: run npm run docs`);
    expect([...stale, ...extra]).toEqual([]);
  });

  it("are an index, one page per registered resource type, the Tenant's, one per function of the plugin, the inventory's and a program's policy ramp's, and the Registry's two pages", () => {
    expect(pages.map((page) => page.path).sort()).toEqual(
      [
        ...[
          "README.md",
          "inventory.md",
          "policy.md",
          "tenant.md",
          ...[...Object.keys(resourceDefinitions), ...Object.keys(invokeDefinitions)].map((name) => `${name}.md`),
        ].map((file) => `${REFERENCE_DIR}/${file}`),
        "docs/_index.md",
        "docs/installation-configuration.md",
      ].sort(),
    );
  });
});

describe("the page of a program's policy ramp", () => {
  const text = pageText(`${REFERENCE_DIR}/policy.md`);

  it("gives stagedRecord's signature and every key of the ramp, evidence's too", () => {
    expect(text).toContain(
      "stagedRecord(domainName: string, record: pulumi.Input<DnsSetupRecord>, policy: DomainPolicyArgs)",
    );
    expect(tableAfter(text, "Keys").map(([key]) => key)).toEqual(
      Object.keys(DomainPolicyArgs.shape).map((key) => `\`${key}\``),
    );
    expect(tableAfter(text, "`evidence`").map(([key]) => key)).toEqual(["`minPassRate`", "`minMessages`", "`minDays`"]);
  });
});

describe.each(Object.entries(resourceDefinitions))("the page of %s", (name, definition) => {
  const text = pageText(`${REFERENCE_DIR}/${name}.md`);

  it("lists every argument of the class, says which replace the resource, and leaves out what is no argument", () => {
    const rows = tableAfter(text, "Inputs");
    const declared = Object.keys(definition.inputs.shape).filter((key) => key !== definition.urnInput);
    expect(rows.map(([input]) => code(input))).toEqual(declared);
    const replacing = rows.filter((row) => row[3] === "replaces").map(([input]) => code(input));
    expect(replacing.sort()).toEqual([...definition.replaceOn].sort());
  });

  it("lists every output, the secret ones marked, and gives the id format", () => {
    const rows = tableAfter(text, "Outputs");
    const outputs = [...Object.keys(definition.outputs.shape), ...Object.keys(definition.idOutputs ?? {})];
    expect(rows.map(([output]) => code(output))).toEqual(outputs);
    const secret = rows.filter((row) => row[1]?.endsWith(", secret")).map(([output]) => code(output));
    expect(secret).toEqual([...(definition.secretOutputs ?? [])]);
    expect(text).toContain(`Resource id: \`${definition.idFormat}\``);
  });

  it("describes every input and output", () => {
    const undescribed = [...tableAfter(text, "Inputs"), ...tableAfter(text, "Outputs")]
      .filter((row) => (row.at(-1) ?? "") === "")
      .map(([field]) => field);
    expect(undescribed).toEqual([]);
  });
});

describe("the inventory's page", () => {
  const text = pageText(`${REFERENCE_DIR}/inventory.md`);

  it("lists every key of a tenant and of its domains, each described", () => {
    const tenant = tableAfter(text, "`tenants[]`");
    expect(tenant.map(([key]) => code(key))).toEqual([
      "name",
      "key",
      "group",
      "groups",
      "plan",
      "subscription",
      "frequency",
      "currency",
      "domains",
      "admins",
      "webhooks",
      "onDelete",
      "dns",
      "policy",
      "ids",
    ]);
    const domain = tableAfter(text, "`tenants[].domains[]`");
    expect(domain.map(([key]) => code(key))).toEqual([
      "name",
      "type",
      "setupRecordType",
      "zone",
      "group",
      "verify",
      "dns",
      "policy",
    ]);
    expect([...tenant, ...domain].filter((row) => (row.at(-1) ?? "") === "")).toEqual([]);
  });
});
