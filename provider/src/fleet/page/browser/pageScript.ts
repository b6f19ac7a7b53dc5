import type { FleetPage, PageDomain, PageTenant, PassRateSeries, StatusWord } from "../model";
import {
  chartWords,
  floorOf,
  matches,
  metaText,
  organizationText,
  publishingText,
  rateOn,
  reportedDays,
  shownText,
  stageRank,
  stageText,
  subscriptionText,
  type TenantFilter,
  trendStages,
  trendWords,
  verifiedCount,
} from "./pageLogic";

// The fleet page's script, inlined into the page: it draws the totals and
// one row per tenant from the embedded data (a screenful at once, the rest
// in chunks right after), a tenant's domains only when the row is opened,
// and filters rows in place. It reads nothing but the page itself.

/** An element the page's HTML holds; a missing one is a page and script out of step. */
function byId<Element extends HTMLElement>(id: string): Element {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the fleet page has no #${id}`);
  return found as Element;
}

const data = JSON.parse(byId("fleet-data").textContent as string) as FleetPage;

/** A tenant's row, and its domains' row once it has been opened. */
interface TenantRow {
  tenant: PageTenant;
  row: HTMLTableRowElement;
  button: HTMLButtonElement;
  expanded: boolean;
  details?: HTMLTableRowElement;
}

const rows: TenantRow[] = [];
const rowOf = new Map<HTMLTableRowElement, TenantRow>();

function el<Tag extends keyof HTMLElementTagNameMap>(
  tag: Tag,
  attributes: Record<string, string> = {},
  children: (Node | null)[] = [],
): HTMLElementTagNameMap[Tag] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "text") node.textContent = value;
    else node.setAttribute(name, value);
  }
  for (const child of children) if (child) node.appendChild(child);
  return node;
}

function svg(tag: string, attributes: Record<string, string | number>): SVGElement {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

/** A value's word and the class that colours it. */
type Words = Record<string, [word: string, className: string]>;

function word(value: unknown, words: Words): HTMLSpanElement {
  const [text, className] = words[String(value)] || ["unknown", "unknown"];
  return el("span", { class: className, text });
}

const YES_NO: Words = { true: ["yes", "ok"], false: ["no", "warn"], unknown: ["unknown", "unknown"] };
const VERIFIED: Words = {
  true: ["verified", "ok"],
  false: ["not verified", "warn"],
  unknown: ["unknown", "unknown"],
};
const CHECK: Words = {
  valid: ["valid", "ok"],
  warning: ["warning", "warn"],
  "no-record": ["no record", "bad"],
  unknown: ["unknown", "unknown"],
};
/** Every status word, most urgent first (the status filter's order), with its colour's class. */
const STATUS_CLASS: Record<StatusWord, string> = {
  "failed shard": "bad",
  "interrupted shard": "bad",
  drifted: "bad",
  "not deployed": "warn",
  unknown: "unknown",
  "record not seen": "bad",
  "waiting for the customer's record": "warn",
  "not verified": "warn",
  verified: "ok",
};
const SOURCE = { service: "the service", state: "the fleet's state", inventory: "the inventory" };

function source(name: keyof typeof SOURCE): HTMLSpanElement {
  return el("span", { class: "source", text: `from ${SOURCE[name]}` });
}

const TOTALS: [key: keyof Omit<FleetPage["totals"], "stages">, label: string][] = [
  ["tenants", "Tenants"],
  ["domains", "Domains"],
  ["verified", "Verified"],
  ["published", "Published"],
  ["drifted", "Drifted tenants"],
  ["failedShards", "Failed shards"],
  ["needsAttention", "Need attention"],
  ["waiting", "Waiting for a customer"],
  ["unknown", "Domains with unknowns"],
];

function renderTotals(): void {
  const totals = data.totals;
  const list = byId("totals");
  for (const [key, label] of TOTALS) {
    list.appendChild(
      el("div", {}, [el("dt", { text: label }), el("dd", { "data-total": key, text: String(totals[key]) })]),
    );
  }
  for (const stage of Object.keys(totals.stages).sort()) {
    const count = String(totals.stages[stage]);
    list.appendChild(
      el("div", {}, [el("dt", { text: `Policy ${stage}` }), el("dd", { "data-stage": stage, text: count })]),
    );
  }
}

const STAGE_FILL = ["#8c959f", "#bf8700", "#0969da", "#1a7f37"];

function stageFill(stage: string): string {
  return STAGE_FILL[stageRank(stage)[0]] as string;
}

function swatch(stage: string): SVGElement {
  const box = svg("svg", { width: 10, height: 10, "aria-hidden": "true" });
  box.appendChild(svg("rect", { width: 10, height: 10, fill: stageFill(stage) }));
  return box;
}

/** The fleet's domains per policy stage, one bar a run, from the runs kept beside the fleet's state. */
function trendChart(stages: string[]): SVGElement {
  const runs = data.trend;
  const width = 480;
  const height = 120;
  const bar = width / runs.length;
  const chart = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "data-runs": runs.length });
  runs.forEach((run, index) => {
    const total = Object.keys(run.stages).reduce((sum, stage) => sum + (run.stages[stage] as number), 0) || 1;
    let top = height;
    for (const stage of stages) {
      const part = ((run.stages[stage] || 0) * height) / total;
      top -= part;
      if (part > 0) {
        const x = (index * bar + 1).toFixed(1);
        const bounds = { x, y: top.toFixed(1), width: Math.max(1, bar - 2).toFixed(1), height: part.toFixed(1) };
        chart.appendChild(svg("rect", { ...bounds, fill: stageFill(stage) }));
      }
    }
  });
  return chart;
}

function renderTrend(): void {
  const stages = trendStages(data.trend);
  const last = data.trend[data.trend.length - 1] as FleetPage["trend"][number];
  const chart = trendChart(stages);
  const words = trendWords(data.trend, stages);
  chart.setAttribute("aria-label", `Domains per policy stage, ${words}`);
  const figure = byId("trend");
  figure.hidden = false;
  figure.appendChild(el("figcaption", { text: "Policy stages over time (bottom: furthest on the way to reject)" }));
  figure.appendChild(chart);
  const legend = stages
    .slice()
    .reverse()
    .map((stage) => el("li", {}, [swatch(stage), document.createTextNode(`${stage}: ${last.stages[stage] || 0} now`)]));
  figure.appendChild(el("ul", { class: "legend" }, legend));
  figure.appendChild(el("p", { class: "note", text: words }));
}

function renderMeta(): void {
  byId("meta").textContent = metaText(data);
  renderShardFailures();
  if (data.reads.failures.length === 0) return;
  const box = byId("failures");
  box.hidden = false;
  box.appendChild(el("p", { text: `${data.reads.failures.length} read(s) failed; the cells they fed read unknown:` }));
  box.appendChild(
    el(
      "ul",
      {},
      data.reads.failures.slice(0, 20).map((text) => el("li", { text })),
    ),
  );
}

/** Each failed shard with its own error: its tenants' cells are the fleet's last word, not the service's. */
function renderShardFailures(): void {
  const failed = data.shards.filter((shard) => shard.failed);
  if (failed.length === 0) return;
  const box = byId("shard-failures");
  box.hidden = false;
  box.appendChild(
    el("h2", { text: `${failed.length} failed shard(s): their tenants are as the fleet last left them` }),
  );
  const items = failed.map((shard) =>
    el("li", { "data-shard": shard.name }, [
      el("strong", { text: `${shard.name} (${shard.tenants} tenants): ` }),
      el("span", { class: "error", text: shard.failure || "its last up failed" }),
    ]),
  );
  box.appendChild(el("ul", {}, items));
}

function options(id: string, values: string[]): void {
  const select = byId<HTMLSelectElement>(id);
  for (const value of values) select.appendChild(el("option", { value, text: value }));
}

function statusCell(tenant: PageTenant): HTMLTableCellElement {
  const status = tenant.status;
  return el("td", { "data-source": status.source }, [
    el("span", { class: `status ${STATUS_CLASS[status.word]}`, text: status.word }),
    status.detail ? el("span", { class: "detail", text: status.detail }) : null,
    source(status.source),
  ]);
}

function planCell(tenant: PageTenant): HTMLTableCellElement {
  return el("td", {}, [
    document.createTextNode(tenant.plan),
    el("span", { class: "detail", text: subscriptionText(tenant) }),
  ]);
}

function tenantRow(tenant: PageTenant): TenantRow {
  const button = el(
    "button",
    { type: "button", class: "expand", "aria-expanded": "false", "aria-controls": `domains-${tenant.key}` },
    [document.createTextNode(`${tenant.name} `), el("span", { class: "key", text: tenant.key })],
  );
  const link = el("a", {
    class: "link",
    href: `#tenant-${tenant.key}`,
    "aria-label": `link to ${tenant.key}`,
    text: "#",
  });
  const row = el("tr", { class: "tenant", id: `tenant-${tenant.key}`, "data-key": tenant.key }, [
    el("td", {}, [button, link]),
    el("td", { text: tenant.shard || "none yet" }),
    planCell(tenant),
    el("td", { text: String(tenant.domains.length) }),
    el("td", { text: verifiedCount(tenant) }),
    statusCell(tenant),
  ]);
  const drawn: TenantRow = { tenant, row, button, expanded: false };
  button.addEventListener("click", () => toggle(drawn, !drawn.expanded));
  rowOf.set(row, drawn);
  return drawn;
}

function chartOf(series: PassRateSeries, reported: number[]): SVGElement {
  const width = 180;
  const height = 40;
  const step = width / Math.max(1, data.reads.days.length - 1);
  const floor = floorOf(series, reported);
  const at = (index: number, rate: number): [x: string, y: string] => [
    (index * step).toFixed(1),
    (height - 3 - ((rate - floor) * (height - 6)) / (100 - floor)).toFixed(1),
  ];
  const chart = svg("svg", {
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "data-points": reported.length,
    "data-floor": floor,
  });
  for (const name of ["dkim", "spf"] as const) {
    const points = reported.map((index) => at(index, rateOn(series[name], index)));
    if (points.length > 1) {
      const line = points.map((xy) => xy.join(",")).join(" ");
      chart.appendChild(svg("polyline", { class: name, fill: "none", "stroke-width": 1.5, points: line }));
    }
    for (const [cx, cy] of points) chart.appendChild(svg("circle", { class: name, cx, cy, r: 2 }));
  }
  return chart;
}

function chartCell(series: PassRateSeries): HTMLSpanElement {
  const reported = reportedDays(series);
  const words = chartWords(series, reported, data.reads.days);
  const chart = chartOf(series, reported);
  chart.setAttribute("aria-label", `pass rates, ${words}`);
  return el("span", { class: "chart" }, [
    chart,
    el("span", { class: series.unread.length > 0 ? "note unknown" : "note", text: words }),
  ]);
}

/** The verification, and for a record the customer publishes, since when and what to send them. */
function verificationCell(domain: PageDomain): HTMLTableCellElement {
  if (!domain.waiting) return el("td", {}, [word(domain.verified, VERIFIED)]);
  const waiting = domain.waiting;
  const record = waiting.record;
  const since = waiting.since ? ` since ${waiting.since.slice(0, 10)}` : "";
  return el("td", { class: "waiting" }, [
    el("span", { class: "warn", text: `waiting for the customer's record${since}` }),
    record ? el("span", { class: "detail", text: `send: ${record.type} ${record.host} ` }) : null,
    record
      ? el("code", { class: "record", text: record.value })
      : el("span", { class: "detail", text: "no record in the fleet's state" }),
  ]);
}

function domainRow(domain: PageDomain): HTMLTableRowElement {
  const checks = (["spf", "dkim", "dmarc"] as const).map((name) =>
    el("span", { class: "check" }, [document.createTextNode(`${name.toUpperCase()} `), word(domain[name], CHECK)]),
  );
  return el("tr", { "data-domain": domain.name }, [
    el("td", { text: domain.name }),
    verificationCell(domain),
    el("td", {}, [word(domain.published, YES_NO), document.createTextNode(` \u2014 ${publishingText(domain)}`)]),
    el("td", { class: domain.stage === "unknown" ? "unknown" : "", text: stageText(domain) }),
    el("td", { class: "checks" }, checks),
    el("td", {}, [chartCell(domain.passRates)]),
  ]);
}

function domainsTable(tenant: PageTenant): HTMLTableCellElement {
  const heads = [
    "Domain",
    "Verification (service)",
    "Record published by the fleet (state)",
    "Policy stage",
    "Records (service)",
    `Pass rates, last ${data.reads.days.length} days (service; DKIM solid, SPF dashed)`,
  ];
  const drift =
    tenant.drift.length === 0
      ? null
      : el(
          "ul",
          { class: "drift" },
          tenant.drift.map((line) => el("li", { class: "bad", text: `drift: ${line}` })),
        );
  const organization = el("p", { class: "note", text: organizationText(tenant) });
  const table = el("table", {}, [
    el("thead", {}, [
      el(
        "tr",
        {},
        heads.map((head) => el("th", { scope: "col", text: head })),
      ),
    ]),
    el("tbody", {}, tenant.domains.map(domainRow)),
  ]);
  return el("td", { class: "domains", colspan: "6" }, [organization, drift, table]);
}

function toggle(drawn: TenantRow, open: boolean): void {
  drawn.expanded = open;
  drawn.button.setAttribute("aria-expanded", String(open));
  if (open && !drawn.details) {
    drawn.details = el("tr", { class: "details", id: `domains-${drawn.tenant.key}` }, [domainsTable(drawn.tenant)]);
  }
  if (open && drawn.details) drawn.row.parentNode?.insertBefore(drawn.details, drawn.row.nextSibling);
  else if (drawn.details?.parentNode) drawn.details.parentNode.removeChild(drawn.details);
}

function filterOfForm(): TenantFilter {
  return {
    attention: byId<HTMLInputElement>("attention").checked,
    status: byId<HTMLSelectElement>("status").value,
    stage: byId<HTMLSelectElement>("stage").value,
    shard: byId<HTMLSelectElement>("shard").value,
    text: byId<HTMLInputElement>("search").value.trim().toLowerCase(),
  };
}

function applyFilters(): void {
  const filter = filterOfForm();
  let shown = 0;
  for (const drawn of rows) {
    const visible = matches(drawn.tenant, filter);
    drawn.row.hidden = !visible;
    if (drawn.details) drawn.details.hidden = !visible;
    if (visible) shown++;
  }
  byId("shown").textContent = shownText(shown, rows.length, data.tenants.length);
}

function openFragment(): void {
  const match = /^#tenant-(.+)$/.exec(location.hash);
  const found = match && document.getElementById(`tenant-${decodeURIComponent(match[1] as string)}`);
  const drawn = found instanceof HTMLTableRowElement ? rowOf.get(found) : undefined;
  if (!drawn) return;
  if (drawn.row.hidden) {
    byId<HTMLFormElement>("filters").reset();
    applyFilters();
  }
  toggle(drawn, true);
  // The browser's own scroll to the fragment, at the load event, blurs what has focus: focus after it.
  if (document.readyState === "complete") focusRow(drawn);
  else window.addEventListener("load", () => focusRow(drawn), { once: true });
}

function focusRow(drawn: TenantRow): void {
  drawn.button.focus();
  drawn.row.scrollIntoView({ block: "start" });
}

/** Rows drawn before the page counts as loaded: a screenful; the rest follow in chunks, so 1,000 tenants never stall it. */
const FIRST_ROWS = 60;
const CHUNK = 200;

function appendRows(from: number, count: number): void {
  const fragment = document.createDocumentFragment();
  const end = Math.min(from + count, data.tenants.length);
  for (const tenant of data.tenants.slice(from, end)) {
    const drawn = tenantRow(tenant);
    rows.push(drawn);
    fragment.appendChild(drawn.row);
  }
  byId("tenant-rows").appendChild(fragment);
  applyFilters();
  if (end < data.tenants.length) setTimeout(() => appendRows(end, CHUNK), 0);
  else {
    document.body.setAttribute("data-rows", "all");
    performance.mark("fleet-rows-drawn");
    openFragment();
  }
}

function start(): void {
  renderMeta();
  renderTotals();
  renderTrend();
  const statuses = Object.keys(STATUS_CLASS).filter((status) =>
    data.tenants.some((tenant) => tenant.status.word === status),
  );
  options("status", statuses);
  options("stage", Object.keys(data.totals.stages).sort());
  options(
    "shard",
    data.shards.map((shard) => shard.name),
  );
  byId("filters").addEventListener("input", applyFilters);
  byId("filters").addEventListener("submit", (event) => event.preventDefault());
  window.addEventListener("hashchange", openFragment);
  appendRows(0, FIRST_ROWS);
}

start();
