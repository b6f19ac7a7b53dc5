import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import type { DmarcClient } from "pulumi-dmarc-partner/client";
import type { FleetPage } from "pulumi-dmarc-partner/fleet";
import type { Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { projectRoot } from "../../scripts/project.mjs";
import { type CliResult, DOMAIN_CREATE_ROUTES, startCommand } from "../reliability/harness";
import { blockingViolations } from "../support/axe";
import { chromiumUnavailable, launchBrowser, type OpenedPage, openFile, ROWS_DRAWN } from "../support/browser";
import { type EmulatorHandle, startTestEmulator } from "../support/emulator";
import { useEngine } from "../support/engine";
import {
  dropFleetStacks,
  fleetBackendUrl,
  fleetProjectFolder,
  organizationIdNamed,
  serviceClient,
  tenant,
  uniqueFleetName,
} from "./support";

// `dmarc-fleet report --html` for 20 tenants on the emulator, opened in
// Debian's chromium: one drifted tenant (its domain changed on the service
// by hand, then `drift`), one failed shard (the service refused its domain
// creates during `up`), a few records served and verified, and twelve days
// of aggregate reports. The page's totals are the JSON's, "needs attention"
// shows exactly the drifted and failed tenants, each tenant's status says
// what it waits for or what failed and where that word comes from (the
// failed shard's own error among them), a domain's chart has a point per
// report day the emulator has, axe-core finds nothing serious in any state
// of the page, light or dark (a browser in dark mode draws the page dark),
// and the page asks the network for nothing but itself. A
// second report the next day reads only that day's pass rates and draws
// the policy stages of both runs.
// DMARC_PAGE_SCREENSHOT=<png> also saves the README's screenshot.

const unavailable = await chromiumUnavailable();
if (unavailable) console.warn(`Skipping the fleet page in a browser: ${unavailable}`);

const CLI = join(projectRoot, "provider", "bin", "dmarc-fleet.js");
const KEYS = [
  "alpha",
  "bravo",
  "charlie",
  "delta",
  "echo",
  "foxtrot",
  "golf",
  "hotel",
  "india",
  "juliett",
  "kilo",
  "lima",
  "mike",
  "november",
  "oscar",
  "papa",
  "quebec",
  "romeo",
  "sierra",
  "tango",
];
/** Shards of four: the last four tenants open the fifth shard, whose up the service fails. */
const SHARD_SIZE = 4;
const FIRST = KEYS.slice(0, 16);
const FAILED = KEYS.slice(16);
const DRIFTED = "charlie";
/** Tenants whose record the test serves in the emulator's zone, so the service verifies them. */
const SERVED = ["alpha", "bravo", "delta", "echo", "foxtrot", "golf"];
/** The rest of the first sixteen publish nothing (`dns: none`): the service waits for their customers' records. */
const WAITING = FIRST.filter((key) => !SERVED.includes(key) && key !== DRIFTED);
const REPORT_DAYS = 12;

let emulator: EmulatorHandle;
let client: DmarcClient;
let browser: Browser;
let project: string;
let env: Record<string, string>;
const fleet = uniqueFleetName("page");
const configStack = `${fleet}-config`;
const pageDir = () => join(project, "page");

function writeInventory(keys: readonly string[]): void {
  writeFileSync(join(project, "tenants.yaml"), stringify({ tenants: keys.map((key) => tenant(key)) }));
}

async function fleetCli(...args: string[]): Promise<CliResult> {
  const argv = [CLI, ...args, "--cwd", project, "--config-stack", configStack, "--fleet", fleet];
  return startCommand(process.execPath, [...argv, "--shard-size", String(SHARD_SIZE)], project, env).done;
}

/** Serves the domain's setup record in the emulator's zone, and has the service verify it now. */
async function serveAndVerify(key: string): Promise<void> {
  const organizationId = await organizationIdNamed(client, `Tenant ${key}`);
  const record = await client.getSetupRecord(organizationId, `${key}.example`, "TXT");
  await emulator.control("PUT", "/dns/records", { name: record.host, type: "TXT", values: [record.value] });
  await emulator.control("POST", `/domains/${key}.example/verify`, { organizationId });
}

/** The fleet the test looks at: 16 tenants up, 4 more whose shard fails, a domain changed by hand, drift. */
async function makeFleet(): Promise<void> {
  writeInventory(FIRST);
  const up = await fleetCli("up");
  expect(up.code, up.stderr).toBe(0);
  for (const key of SERVED) await serveAndVerify(key);

  writeInventory(KEYS);
  const faults = await Promise.all(
    DOMAIN_CREATE_ROUTES.map((route) =>
      emulator.control<{ id: string }>("POST", "/faults", { route, errorRate: 1, errorStatus: 503 }),
    ),
  );
  const failing = await fleetCli("up");
  for (const fault of faults) await emulator.control("DELETE", `/faults/${fault.id}`);
  expect(failing.code, failing.stdout).toBe(1);

  const organizationId = await organizationIdNamed(client, `Tenant ${DRIFTED}`);
  await client.updateDomain(organizationId, `${DRIFTED}.example`, { type: "parked" });
  const drift = await fleetCli("drift");
  expect(drift.code, drift.stderr).toBe(4);
  await emulator.control("POST", "/clock", { advanceDays: REPORT_DAYS });
}

/** The day before the emulator's report day: the last day with whole reports. */
async function reportsUntil(): Promise<string> {
  const { today } = await emulator.control<{ today: string }>("GET", "/clock");
  return new Date(Date.parse(today) - 86_400_000).toISOString().slice(0, 10);
}

let page: FleetPage;
let opened: OpenedPage;

describe.skipIf(unavailable !== undefined)("the fleet page in a browser", () => {
  beforeAll(async () => {
    env = { ...(await useEngine()), PULUMI_BACKEND_URL: fleetBackendUrl(fleet) };
    emulator = await startTestEmulator();
    client = serviceClient(emulator);
    project = fleetProjectFolder(`dmarc-fleet-page-${fleet}`);
    const workspace = await LocalWorkspace.create({
      workDir: project,
      envVars: env,
      projectSettings: { name: "dmarc-fleet-page", runtime: "nodejs" },
    });
    await workspace.createStack(configStack);
    await workspace.setAllConfig(configStack, emulator.stackConfig);
    await makeFleet();
    rmSync(pageDir(), { recursive: true, force: true });
    const report = await fleetCli("report", "--html", "page", "--json", "--until", await reportsUntil());
    expect(report.code, report.stderr).toBe(0);
    page = JSON.parse(report.stdout) as FleetPage;
    browser = await launchBrowser();
    opened = await openFile(browser, join(pageDir(), "index.html"), "", ROWS_DRAWN);
  }, 1_800_000);

  afterAll(async () => {
    try {
      await browser?.close();
      if (project) await dropFleetStacks({ projectDir: project, projectName: "dmarc-fleet-page", env }, fleet);
    } finally {
      await emulator?.emulator.close();
    }
  }, 600_000);

  it("reports the fleet's totals, and says what the reads cost", async () => {
    expect(page.totals).toMatchObject({
      tenants: 20,
      domains: 20,
      verified: SERVED.length,
      drifted: 1,
      failedShards: 1,
      needsAttention: 1 + FAILED.length,
      waiting: WAITING.length,
      unknown: 0,
    });
    expect(page.reads.failures).toEqual([]);
    // One overview per organisation and one pass-rate read per day (20 domains fit one request), plus a token.
    expect(page.reads.requests).toBeGreaterThanOrEqual(20 + 30);
    expect(page.reads.requests).toBeLessThanOrEqual(20 + 30 + 2);
    const onPage = await opened.page.$$eval("[data-total]", (cells) =>
      Object.fromEntries(cells.map((cell) => [cell.getAttribute("data-total"), Number(cell.textContent)])),
    );
    const { stages, ...counts } = page.totals;
    expect(onPage).toEqual(counts);
    const stagesOnPage = await opened.page.$$eval("[data-stage]", (cells) =>
      Object.fromEntries(cells.map((cell) => [cell.getAttribute("data-stage"), Number(cell.textContent)])),
    );
    expect(stagesOnPage).toEqual(stages);
  });

  it("shows exactly the drifted and failed tenants under needs attention, each with its reason in words", async () => {
    const visible = () =>
      opened.page.$$eval("tr.tenant:not([hidden])", (rows) => rows.map((row) => row.getAttribute("data-key")));
    expect(await visible()).toHaveLength(20);
    await opened.page.focus("#attention");
    await opened.page.keyboard.press("Space");
    expect((await visible()).sort()).toEqual([DRIFTED, ...FAILED].sort());
    await opened.page.keyboard.press("Space");
    expect(await visible()).toHaveLength(20);
  });

  it("gives each tenant its own status, with what it rests on and where that comes from", async () => {
    const failedShard = page.shards.find((shard) => shard.failed);
    expect(failedShard?.failure).toMatch(/503/);
    const expected: [string, string, string | RegExp | undefined][] = [
      ["alpha", "verified", undefined],
      [WAITING[0] as string, "waiting for the customer's record", /^since \d{4}-\d{2}-\d{2}, 0 of 1 verified$/],
      [DRIFTED, "drifted", `differs Domain ${DRIFTED}.example`],
      ["tango", "failed shard", failedShard?.failure as string],
    ];
    const SOURCE = {
      verified: "the service",
      waiting: "the service",
      drifted: "the fleet's state",
      failed: "the fleet's state",
    };
    for (const [key, word, detail] of expected) {
      const cell = await opened.page.$eval(`#tenant-${key} td:last-child`, (td) => ({
        word: td.querySelector(".status")?.textContent,
        detail: td.querySelector(".detail")?.textContent,
        source: td.querySelector(".source")?.textContent,
      }));
      expect(cell, key).toEqual({
        word,
        detail: detail instanceof RegExp ? expect.stringMatching(detail) : detail,
        source: `from ${SOURCE[word.split(" ")[0] as keyof typeof SOURCE]}`,
      });
      expect(page.tenants.find((found) => found.key === key)?.status.word).toBe(word);
    }
    const shardError = await opened.page.$eval(
      `#shard-failures li[data-shard="${failedShard?.name}"]`,
      (li) => li.textContent,
    );
    expect(shardError).toContain(failedShard?.failure);
  });

  it("shows the record a waiting tenant's customer is to publish, as the service gave it", async () => {
    const key = WAITING[0] as string;
    const record = await client.getSetupRecord(
      await organizationIdNamed(client, `Tenant ${key}`),
      `${key}.example`,
      "TXT",
    );
    await opened.page.click(`#tenant-${key} button.expand`);
    const cell = await opened.page.$eval(`#domains-${key} td.waiting`, (td) => td.textContent);
    expect(cell).toContain(`send: TXT ${record.host}`);
    expect(cell).toContain(record.value);
    await opened.page.click(`#tenant-${key} button.expand`);
  });

  it.each(["light", "dark"])(
    "breaks no serious WCAG 2.1 AA rule loaded, with a tenant open, or with filters on, in the %s scheme",
    async (scheme) => {
      const audited = await openFile(browser, join(pageDir(), "index.html"), "", ROWS_DRAWN);
      await audited.page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: scheme }]);
      await audited.page.setViewport({ width: 1280, height: 900 });
      expect(await blockingViolations(audited.page)).toEqual([]);
      await audited.page.click(`#tenant-${DRIFTED} button.expand`);
      expect(await blockingViolations(audited.page)).toEqual([]);
      await audited.page.click("#attention");
      await audited.page.select("#status", "failed shard");
      expect(await audited.page.$$eval("tr.tenant:not([hidden])", (rows) => rows.length)).toBe(FAILED.length);
      expect(await blockingViolations(audited.page)).toEqual([]);
      await audited.page.close();
    },
  );

  it("draws a point per report day the emulator has for a domain, opened from the keyboard", async () => {
    const { days } = await emulator.control<{ days: unknown[] }>("GET", "/reports/alpha.example");
    expect(days).toHaveLength(REPORT_DAYS);
    await opened.page.focus("#tenant-alpha button.expand");
    await opened.page.keyboard.press("Enter");
    const chart = '#domains-alpha tr[data-domain="alpha.example"] svg';
    expect(await opened.page.$eval(chart, (svg) => Number(svg.getAttribute("data-points")))).toBe(days.length);
    expect(await opened.page.$$eval(`${chart} circle.dkim`, (points) => points.length)).toBe(days.length);
    const cells = await opened.page.$eval('#domains-alpha tr[data-domain="alpha.example"]', (row) => row.textContent);
    expect(cells).toContain("verified");
    expect(cells).toContain(`${REPORT_DAYS} day(s) of reports`);
  });

  it("draws each chart at its full width in a 1280 px window and on A4 paper", async () => {
    const shown = await openFile(browser, join(pageDir(), "index.html"), "", ROWS_DRAWN);
    // A string: the tests compile without the DOM's types.
    const squeezed = `[...document.querySelectorAll("td.domains svg")]
      .filter((svg) => svg.getBoundingClientRect().width < Number(svg.getAttribute("width"))
        || svg.getBoundingClientRect().right > document.documentElement.clientWidth).length`;
    const openAll = `document.querySelectorAll("button.expand").forEach((button) => button.click())`;
    await shown.page.setViewport({ width: 1280, height: 900 });
    await shown.page.evaluate(openAll);
    expect(await shown.page.$$eval("td.domains svg", (charts) => charts.length)).toBe(20);
    expect(await shown.page.evaluate(squeezed)).toBe(0);
    await shown.page.emulateMediaType("print");
    // A4's printable width at the browser's 96 px an inch, its default margins off.
    await shown.page.setViewport({ width: 718, height: 1000 });
    expect(await shown.page.evaluate(squeezed)).toBe(0);
    await shown.page.close();
  });

  it("opens the tenant a link names", async () => {
    const linked = await openFile(browser, join(pageDir(), "index.html"), "#tenant-romeo", ROWS_DRAWN);
    expect(
      await linked.page.$eval("#tenant-romeo button.expand", (button) => button.getAttribute("aria-expanded")),
    ).toBe("true");
    expect(await linked.page.$eval("#domains-romeo", (row) => row.textContent)).toContain("romeo.example");
    // A string: the tests compile without the DOM's types.
    expect(await linked.page.evaluate(`document.activeElement.closest("tr").id`)).toBe("tenant-romeo");
    expect(linked.errors).toEqual([]);
    await linked.page.close();
  });

  it("asks the network for nothing but the file itself, and logs no error", () => {
    expect(opened.requests).toEqual([pathToFileURL(join(pageDir(), "index.html")).href]);
    expect(opened.errors).toEqual([]);
    const html = readFileSync(join(pageDir(), "index.html"), "utf8");
    expect(html).not.toContain(emulator.partner.clientSecret);
    expect(html).not.toMatch(/<(?:link|img|iframe)\b|\bsrc=/);
  });

  it("reads only the new day's pass rates the next day, and draws the policy stages of both runs", async () => {
    await emulator.control("POST", "/clock", { advanceDays: 1 });
    const report = await fleetCli("report", "--html", "page-next", "--json", "--until", await reportsUntil());
    expect(report.code, report.stderr).toBe(0);
    const next = JSON.parse(report.stdout) as FleetPage;
    const organizations = next.tenants.filter((found) => found.organizationId).length;
    // One overview per organisation and one pass-rate read for the new day (20 domains fit one request), plus a token.
    expect(next.reads.requests).toBeGreaterThanOrEqual(organizations + 1);
    expect(next.reads.requests).toBeLessThanOrEqual(organizations + 1 + 2);
    const alpha = (of: FleetPage) => of.tenants.find((found) => found.key === "alpha")?.domains[0]?.passRates;
    expect(alpha(next)?.messages.slice(0, -1)).toEqual(alpha(page)?.messages.slice(1));
    expect(next.trend.map((run) => run.stages)).toEqual([page.totals.stages, next.totals.stages]);
    const shown = await openFile(browser, join(project, "page-next", "index.html"), "", ROWS_DRAWN);
    expect(await shown.page.$eval("#trend svg", (svg) => svg.getAttribute("data-runs"))).toBe("2");
    expect(await shown.page.$$eval("#trend rect", (bars) => bars.length)).toBeGreaterThanOrEqual(2);
    expect(await blockingViolations(shown.page)).toEqual([]);
    expect(shown.errors).toEqual([]);
    await shown.page.close();
  }, 600_000);

  it.runIf(process.env.DMARC_PAGE_SCREENSHOT)("saves the README's screenshot", async () => {
    const shot = await openFile(browser, join(pageDir(), "index.html"), `#tenant-${DRIFTED}`, ROWS_DRAWN);
    await shot.page.setViewport({ width: 1280, height: 900 });
    await shot.page.click("#tenant-alpha button.expand");
    await shot.page.evaluate("window.scrollTo(0, 0)");
    const file = join(projectRoot, process.env.DMARC_PAGE_SCREENSHOT as string);
    mkdirSync(dirname(file), { recursive: true });
    await shot.page.screenshot({ path: file });
    await shot.page.close();
  });
});
