import { OutputOf, PriceOf, TenantPlanError, tenantPlan } from "pulumi-dmarc-partner";
import { describe, expect, it } from "vitest";

// The tenant plan alone, with no engine: the objects a declaration gives, in
// the order the Tenant registers them, and the problems it refuses.

const spread = {
  name: "Spread Co",
  group: "Main",
  groups: ["Europe"],
  plan: { name: "Business", frequency: "yearly" as const },
  domains: [{ name: "spread.example" }, { name: "spread.example.eu", group: "Europe", verify: true }],
  admins: ["it@spread.example"],
  webhooks: [{ name: "events", url: "https://hooks.spread.example/dmarc", events: ["domain.verified" as const] }],
  onDelete: "keep" as const,
};

const problemsOf = (declaration: Parameters<typeof tenantPlan>[1]) => {
  try {
    tenantPlan("spread", declaration, 'tenant "spread"');
  } catch (error) {
    expect(error).toBeInstanceOf(TenantPlanError);
    return (error as TenantPlanError).problems;
  }
  return [];
};

describe("tenantPlan", () => {
  it("lists each object with its name, in the order the service needs, every one retained with onDelete: keep", () => {
    const plan = tenantPlan("spread", spread, 'tenant "spread"');
    expect(plan.map((object) => `${object.type} ${object.name}`)).toEqual([
      "Organization spread",
      "DomainGroup spread/group",
      "DomainGroup spread/group/Europe",
      "Subscription spread/subscription",
      "Invitation spread/admin/it@spread.example",
      "Webhook spread/webhook/events",
      "Domain spread.example",
      "Domain spread.example.eu",
    ]);
    expect(plan.every((object) => object.retainOnDelete)).toBe(true);
    const eu = plan.at(-1);
    expect(eu?.inputs.groupId).toEqual(new OutputOf("spread/group/Europe", "groupId"));
    expect(eu?.inputs).not.toHaveProperty("group");
    expect([eu?.verify, eu?.dependsOn]).toEqual([true, ["spread/subscription", "spread/webhook/events"]]);
    expect(plan[3]?.inputs.priceId).toEqual(new PriceOf(spread.plan));
  });

  it("declares no subscription with none, and a suspended one to adopt with suspended", () => {
    const none = tenantPlan("spread", { ...spread, subscription: "none" }, "t");
    expect(none.map((object) => object.type)).not.toContain("Subscription");
    expect(none.find((object) => object.type === "Domain")?.dependsOn).toEqual(["spread/webhook/events"]);
    const suspended = tenantPlan(
      "spread",
      { ...spread, subscription: "suspended", existingIds: { subscription: "org_1/sub_1" } },
      "t",
    );
    expect(suspended.find((object) => object.type === "Subscription")?.inputs).toMatchObject({
      suspended: true,
      importId: "org_1/sub_1",
    });
  });

  it("refuses, all at once, what the objects' own checks cannot see", () => {
    expect(
      problemsOf({
        ...spread,
        plan: undefined,
        groups: ["Europe", "Main", "Europe"],
        domains: [{ name: "a.example", group: "Asia" }],
      }),
    ).toEqual([
      'tenant "spread": groups[2] "Europe" is listed already',
      'tenant "spread": groups[1] "Main" is the tenant\'s group already',
      'tenant "spread": domains[0].group "Asia" is neither the tenant\'s group nor one of its groups',
      'tenant "spread": plan is required unless subscription is none',
    ]);
  });
});
