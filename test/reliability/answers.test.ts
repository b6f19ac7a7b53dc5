import type { StateSnapshot } from "dmarc-partner-emulator";
import * as dmarc from "pulumi-dmarc-partner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { createTestStack } from "../support/engine";
import { inventory, serviceIds, stateIds } from "./fleet";
import { emulatorState, report } from "./harness";
import {
  htmlPage,
  huge,
  late,
  rewriteJson,
  startTamperingProxy,
  type Tamper,
  type TamperingProxy,
  truncated,
} from "./proxy";

// Hostile and malformed answers through the real engine. test/client/wire.test.ts
// covers how the client reads each one; here they reach resources in a
// `pulumi up`: each becomes a clear error on the resource it hit (never a
// crash or a hang), a call the service did carry out is adopted rather than
// orphaned, and once the answers are sane again a second `up` converges with
// nothing duplicated.

const organizationCreate = (name: string) => ({
  method: "POST",
  path: /^\/v1\/organizations$/,
  body: new RegExp(`"name":"Hostile ${name} Ltd"`),
});
const setupRead = (domain: string) => ({
  method: "GET",
  path: new RegExp(`^/v1/domains/${domain.replace(".", "\\.")}/setup$`),
});

interface Case {
  tamper: Tamper;
  /** The resource the answer reaches, as the engine names it in diagnostics. */
  resource: string;
  /** What its error says; undefined when the provider absorbs the answer and the resource is created. */
  error?: RegExp;
}

const cases: Case[] = [
  {
    tamper: {
      name: "HTML page with 200 to a create",
      ...organizationCreate("Portal"),
      forward: false,
      answer: htmlPage(200, "Welcome to nginx!"),
    },
    resource: "dmarc:Organization (portal)",
    error: /answered 200 with an HTML page \("Welcome to nginx!"\) instead of JSON/,
  },
  {
    tamper: {
      name: "HTML error page with 502 to a create",
      ...organizationCreate("Gateway"),
      forward: false,
      answer: htmlPage(502, "502 Bad Gateway"),
    },
    resource: "dmarc:Organization (gateway)",
    error: /answered 502: an HTML page \("502 Bad Gateway"\) \(after 3 attempts/,
  },
  {
    tamper: {
      name: "empty body with 200 to a create",
      ...organizationCreate("Empty"),
      forward: false,
      answer: () => ({ status: 200, headers: { "content-type": "application/json" }, body: "" }),
    },
    resource: "dmarc:Organization (empty)",
    error: /answered 200 with an empty body where JSON was expected/,
  },
  {
    tamper: { name: "silence to a create", ...organizationCreate("Silence"), forward: false, answer: () => "hang" },
    resource: "dmarc:Organization (silence)",
    error: /was sent, but no answer came back \(no complete answer within 1500 ms\)/,
  },
  {
    tamper: {
      name: "cut-off JSON to a carried-out create",
      ...organizationCreate("Truncated"),
      forward: true,
      answer: truncated,
    },
    resource: "dmarc:Organization (truncated)",
  },
  {
    tamper: {
      name: "wrong types to a carried-out create",
      ...organizationCreate("Types"),
      forward: true,
      answer: rewriteJson((organization) => ({ ...organization, id: 42, createdAt: true })),
    },
    resource: "dmarc:Organization (types)",
  },
  {
    tamper: {
      name: "6 MB answer to a carried-out create",
      ...organizationCreate("Huge"),
      forward: true,
      answer: huge(201),
    },
    resource: "dmarc:Organization (huge)",
  },
  {
    tamper: {
      name: "answer after the client timeout to a carried-out create",
      ...organizationCreate("Late"),
      forward: true,
      answer: late(4_000),
    },
    resource: "dmarc:Organization (late)",
  },
  {
    tamper: {
      name: "wrong types in a read after a create",
      ...setupRead("types.example"),
      forward: true,
      answer: rewriteJson((record) => ({ ...record, value: 12345 })),
    },
    resource: "dmarc:Domain (types.example)",
    error:
      /does not match the expected shape \(value: Invalid input: expected string, received number\)[\s\S]*created as org_\w+\/types\.example; the next `pulumi up` finishes it/,
  },
  {
    tamper: {
      name: "6 MB answer to a read after a create",
      ...setupRead("huge.example"),
      forward: false,
      answer: huge(200),
    },
    resource: "dmarc:Domain (huge.example)",
    error: /answered 200 with an answer larger than 5242880 bytes[\s\S]*the next `pulumi up` finishes it/,
  },
  {
    tamper: {
      name: "HTML page with 200 to a renewal, not carried out",
      method: "POST",
      path: /^\/v1\/partners\/subscriptions\/[^/]+\/renew$/,
      forward: false,
      answer: htmlPage(200, "Welcome to nginx!"),
    },
    resource: "dmarc:Subscription (plan)",
    error:
      /renew subscription failed: POST \/v1\/partners\/subscriptions\/sub_\w+\/renew answered 200 with an HTML page[\s\S]*the next `pulumi up` finishes it/,
  },
  {
    tamper: {
      name: "plain text to a read after an invitation",
      method: "GET",
      path: /^\/v1\/users\/admin%40hostile\.example$/,
      forward: false,
      answer: () => ({ status: 200, headers: { "content-type": "text/plain" }, body: "OK" }),
    },
    resource: "dmarc:Invitation (admin)",
    error: /answered 200 with a body that is not JSON \(content-type text\/plain\)/,
  },
];

/** Two years ahead: the subscription needs renewals right after it is assigned. */
const KEEP_ACTIVE_UNTIL = new Date(Date.now() + 2 * 365 * 86_400_000).toISOString().slice(0, 10);

const ORGANIZATIONS = ["Portal", "Gateway", "Empty", "Silence", "Truncated", "Types", "Huge", "Late"];

function program() {
  for (const name of ORGANIZATIONS) new dmarc.Organization(name.toLowerCase(), { name: `Hostile ${name} Ltd` });
  const host = new dmarc.Organization("host", { name: "Hostile Host Ltd" });
  const group = new dmarc.DomainGroup("host-main", { organizationId: host.organizationId, name: "main" });
  for (const domain of ["types.example", "huge.example"]) {
    new dmarc.Domain(domain, { organizationId: host.organizationId, domain, groupId: group.groupId });
  }
  new dmarc.Invitation("admin", { organizationId: host.organizationId, email: "admin@hostile.example" });
  new dmarc.Subscription("plan", {
    organizationId: host.organizationId,
    priceId: dmarc.getPriceId({ plan: "Starter" }),
    keepActiveUntil: KEEP_ACTIVE_UNTIL,
  });
  return {};
}

/** Diagnostics of one resource in an engine error: its header line up to the next resource's. */
function diagnosticsOf(message: string, resource: string): string {
  const start = message.indexOf(`${resource}:`);
  if (start < 0) return "";
  const next = message.slice(start + resource.length).search(/\n {2}\S+:\S+ \(/);
  return next < 0 ? message.slice(start) : message.slice(start, start + resource.length + next);
}

let handle: EmulatorHandle;
let proxy: TamperingProxy;

beforeAll(async () => {
  handle = await startTestEmulator();
  proxy = await startTamperingProxy(
    handle.emulator.url,
    cases.map((entry) => entry.tamper),
  );
});

afterAll(async () => {
  await proxy?.close();
  await handle?.emulator.close();
});

describe("hostile answers in a pulumi up", () => {
  it("become clear errors on the resources they hit, never orphans, and a second up converges", async () => {
    const stack = await createTestStack({
      projectName: "reliability-answers",
      program: async () => program(),
      config: {
        ...handle.stackConfig,
        "dmarc:baseUrl": { value: proxy.url },
        "dmarc:maxAttempts": { value: "3" },
        "dmarc:requestTimeoutMs": { value: "1500" },
      },
    });
    const partnerId = handle.partner.id;
    const expectNothingUntracked = async (snapshot: StateSnapshot) => {
      expect(serviceIds(snapshot, partnerId)).toEqual(stateIds(await stack.exportStack()));
    };
    try {
      const failure = await stack.up({ continueOnError: true }).then(
        () => "the first up succeeded",
        (error: Error) => error.message,
      );
      for (const entry of cases) {
        const diagnostics = diagnosticsOf(failure, entry.resource);
        if (entry.error) expect(diagnostics, entry.tamper.name).toMatch(entry.error);
        else expect(diagnostics, entry.tamper.name).toBe("");
      }
      expect(failure).not.toMatch(/TypeError|ReferenceError|SyntaxError|Cannot read properties|Unexpected token/);
      const afterFirst = await emulatorState(handle);
      await expectNothingUntracked(afterFirst);
      // Carried out despite the answer: adopted, each once. Refused or never received: not there.
      expect(afterFirst.organizations.map((organization) => organization.name).sort()).toEqual(
        ["Host", "Huge", "Late", "Truncated", "Types"].map((name) => `Hostile ${name} Ltd`),
      );

      proxy.heal();
      // What was recorded half-finished can be read back like anything else.
      expect((await stack.refresh()).summary.result).toBe("succeeded");
      const second = await stack.up();
      expect(second.summary.result).toBe("succeeded");
      const converged = await emulatorState(handle);
      await expectNothingUntracked(converged);
      expect(inventory(converged, partnerId).filter((line) => line.startsWith("organization "))).toEqual(
        [...ORGANIZATIONS, "Host"].map((name) => `organization Hostile ${name} Ltd`).sort(),
      );
      expect(inventory(converged, partnerId)).toEqual([...new Set(inventory(converged, partnerId))]);
      expect(converged.domains.map((domain) => domain.domain).sort()).toEqual(["huge.example", "types.example"]);
      // The half-finished subscription was renewed as declared, not assigned twice.
      expect(converged.subscriptions).toHaveLength(1);
      expect(converged.subscriptions[0]?.cancelledAt).toBeNull();
      expect(Date.parse(converged.subscriptions[0]?.expireDate ?? "")).toBeGreaterThan(Date.parse(KEEP_ACTIVE_UNTIL));

      await stack.destroy();
      expect(inventory(await emulatorState(handle), partnerId)).toEqual([]);
      report("answers", "through the engine", {
        cases: cases.length,
        hostileAnswersServed: Object.values(proxy.applied).reduce((sum, count) => sum + count, 0),
        byCase: proxy.applied,
        clearErrors: cases.filter((entry) => entry.error).length,
        absorbed: cases.filter((entry) => !entry.error).length,
      });
    } finally {
      await stack.workspace.removeStack(stack.name, { force: true });
    }
  }, 300_000);

  it("in the program's own calls (the plan catalogue) fail the preview with a clear message", async () => {
    const broken = await startTamperingProxy(handle.emulator.url, [
      {
        name: "HTML error page to the plan catalogue",
        method: "GET",
        path: /^\/v1\/partners\/plans$/,
        forward: false,
        answer: htmlPage(503, "503 Service Temporarily Unavailable"),
      },
    ]);
    const stack = await createTestStack({
      projectName: "reliability-answers-plans",
      program: async () => {
        const organization = new dmarc.Organization("org", { name: "Hostile Plans Ltd" });
        new dmarc.Subscription("plan", {
          organizationId: organization.organizationId,
          priceId: dmarc.getPriceId({ plan: "Starter" }),
        });
        return {};
      },
      config: { ...handle.stackConfig, "dmarc:baseUrl": { value: broken.url }, "dmarc:maxAttempts": { value: "2" } },
    });
    try {
      const failure = await stack.preview().then(
        () => "the preview succeeded",
        (error: Error) => error.message,
      );
      expect(failure).toMatch(
        /list plans failed: GET \/v1\/partners\/plans answered 503: an HTML page \("503 Service Temporarily Unavailable"\) \(after 2 attempts/,
      );
      expect(failure).not.toMatch(/TypeError|ReferenceError|SyntaxError|Cannot read properties|Unexpected token/);
      expect(broken.applied["HTML error page to the plan catalogue"]).toBe(2);
    } finally {
      await stack.workspace.removeStack(stack.name, { force: true });
      await broken.close();
    }
  }, 120_000);
});
