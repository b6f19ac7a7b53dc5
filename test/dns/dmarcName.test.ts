import { describe, expect, it } from "vitest";
import { isDmarcPolicy, isPublished, planAtName, unchangedSince } from "../../provider/src/dns/dmarcName";
import { encodeName, RecordClass, RecordType, type ResourceRecord, txtData } from "../../provider/src/dns/message";

// Which records at a _dmarc name a write replaces, without a server: the
// cases the tests against BIND and Knot do not reach.

const NAME = "_dmarc.acme.example";
const POLICY = "v=DMARC1; p=none";

function txt(strings: string[], ttl = 300): ResourceRecord {
  const data = Buffer.concat(strings.map((text) => Buffer.concat([Buffer.from([text.length]), Buffer.from(text)])));
  return { name: NAME, type: RecordType.TXT, class: RecordClass.IN, ttl, data };
}

const cname = (target: string): ResourceRecord => ({
  name: NAME,
  type: RecordType.CNAME,
  class: RecordClass.IN,
  ttl: 300,
  data: encodeName(target),
});

describe("planAtName", () => {
  it("replaces the previous value even when it is no policy, and keeps every other TXT", () => {
    const found = [txt(["site=1"]), txt(["old-value"]), txt(["v=DMARC1; p=reject"])];
    const plan = planAtName(found, { type: "TXT", value: POLICY }, { type: "TXT", value: "old-value" });
    expect(plan.replaced).toEqual([found[1], found[2]]);
    expect(plan.kept).toEqual([found[0]]);
  });

  it("reads a TXT split into several strings as their concatenation", () => {
    const split = txt(["v=DMARC1;", " p=none"]);
    const plan = planAtName([split], { type: "TXT", value: POLICY });
    expect(plan.replaced).toEqual([split]);
    expect(isPublished(plan, { type: "TXT", value: POLICY }, 300)).toBe(true);
    expect(isPublished(plan, { type: "TXT", value: POLICY }, 3600)).toBe(false);
  });

  it("counts the declared record twice over (split two ways) as two policies: not published", () => {
    const plan = planAtName([txt([POLICY]), txt(["v=DMARC1;", " p=none"])], { type: "TXT", value: POLICY });
    expect(isPublished(plan, { type: "TXT", value: POLICY }, 300)).toBe(false);
  });

  it("compares CNAME targets without regard to case", () => {
    const plan = planAtName([cname("target.example")], { type: "CNAME", value: "Target.Example." });
    expect(isPublished(plan, { type: "CNAME", value: "Target.Example." }, 300)).toBe(true);
  });
});

describe("isDmarcPolicy", () => {
  it.each([
    ["v=DMARC1; p=none", true],
    ["v = DMARC1;p=reject", true],
    ["v=DMARC1", true],
    ["v=DMARC10; p=none", false],
    ["site-verification=v=DMARC1", false],
  ])("%s: %s", (value, expected) => {
    expect(isDmarcPolicy(value)).toBe(expected);
  });
});

describe("unchangedSince", () => {
  it("pins each set read exactly and each type not found as absent, with TTL 0", () => {
    const found = [txt([POLICY]), txt(["site=1"])];
    expect(unchangedSince(NAME, found)).toEqual([
      { name: NAME, type: RecordType.TXT, class: RecordClass.IN, ttl: 0, data: txtData(POLICY) },
      { name: NAME, type: RecordType.TXT, class: RecordClass.IN, ttl: 0, data: txtData("site=1") },
      { name: NAME, type: RecordType.CNAME, class: RecordClass.NONE, ttl: 0, data: Buffer.alloc(0) },
    ]);
  });
});
