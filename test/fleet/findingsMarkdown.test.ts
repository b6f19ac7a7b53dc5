import {
  COMMENT_LIMIT,
  FINDINGS_FORMAT_VERSION,
  type FleetFindings,
  findingsMarkdown,
  type TenantFindings,
} from "pulumi-dmarc-partner/fleet";
import { describe, expect, it } from "vitest";

// The pull-request comment of a change touching every tenant of a large
// fleet: GitHub refuses a comment over 65,536 characters, so the comment
// must fit, say what it left out, and name the complete report.

function changedTenant(index: number): TenantFindings {
  const key = `tenant-${String(index).padStart(4, "0")}`;
  return {
    key,
    shard: `prod-${String(Math.floor(index / 50) + 1).padStart(3, "0")}`,
    created: [],
    updated: [
      {
        type: "Organization",
        name: key,
        id: `org_${String(index).padStart(24, "0")}`,
        properties: [{ name: "name", old: `Customer ${index}`, new: `Customer ${index} Ltd` }],
      },
      { type: "DomainGroup", name: `${key}/group`, properties: [{ name: "name", old: "Main", new: "Production" }] },
    ],
    replaced: [],
    deleted: [],
    differs: [],
    missing: [],
  };
}

function findingsOf(tenants: TenantFindings[]): FleetFindings {
  return {
    formatVersion: FINDINGS_FORMAT_VERSION,
    tenants,
    totals: {
      tenants: { new: 0, changed: tenants.length, offboarding: 0, refused: 0, drifted: 0 },
      objects: { create: 0, update: tenants.length * 2, replace: 0, delete: 0, differs: 0, missing: 0 },
    },
    removableTombstones: [],
    notes: [],
  };
}

const subject = (tenants: TenantFindings[]) => ({
  command: "preview",
  fleet: "prod",
  results: [],
  findings: findingsOf(tenants),
});

describe("the pull-request comment", () => {
  it("holds every tenant when it fits", () => {
    const comment = findingsMarkdown(subject([changedTenant(1), changedTenant(2)]), { fullReport: "plan.full.md" });
    expect(comment).toContain("| tenant-0001 | prod-001 | 2 updated |");
    expect(comment.match(/<details>/g)).toHaveLength(2);
    expect(comment).not.toContain("Left out");
    expect(comment).toMatch(/\*\*Totals:\*\* tenants: 0 new, 2 changed/);
  });

  it("stays under GitHub's limit for 2,000 changed tenants, saying what it left out and where the rest is", () => {
    const tenants = Array.from({ length: 2000 }, (_, index) => changedTenant(index));
    const comment = findingsMarkdown(subject(tenants), { fullReport: "plan.full.md" });
    expect(comment.length).toBeLessThanOrEqual(COMMENT_LIMIT);
    const rows = comment.match(/^\| tenant-\d{4} \|/gm) ?? [];
    const sections = comment.match(/<details>/g) ?? [];
    const cut =
      /Left out to stay under GitHub's 65,536-character limit: (\d+) table row\(s\) and (\d+) section\(s\)\. The full report: `plan\.full\.md`\./.exec(
        comment,
      );
    expect(cut).not.toBeNull();
    expect(rows.length + Number(cut?.[1])).toBe(2000);
    expect(sections.length + Number(cut?.[2])).toBe(2000);
    expect(comment.trimEnd().endsWith("0 missing on the service")).toBe(true);

    const complete = findingsMarkdown(subject(tenants), {
      fullReport: "plan.full.md",
      limit: Number.POSITIVE_INFINITY,
    });
    expect(complete.match(/<details>/g)).toHaveLength(2000);
  });
});
