// The fleet page's script, inlined into the page: it draws the totals and
// one row per tenant from the embedded data (a screenful at once, the rest
// in chunks right after), a tenant's domains only when the row is opened,
// and filters rows in place. It reads nothing but the page itself.

export const PAGE_SCRIPT = String.raw`
"use strict";
(function () {
  var data = JSON.parse(document.getElementById("fleet-data").textContent);
  var byKey = new Map(data.tenants.map(function (tenant) { return [tenant.key, tenant]; }));
  var rows = [];

  function el(tag, attributes, children) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) {
      if (name === "text") node.textContent = attributes[name];
      else node.setAttribute(name, attributes[name]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  function svg(tag, attributes) {
    var node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    Object.keys(attributes).forEach(function (name) { node.setAttribute(name, String(attributes[name])); });
    return node;
  }

  function word(value, words) {
    var entry = words[String(value)] || ["unknown", "unknown"];
    return el("span", { class: entry[1], text: entry[0] });
  }

  var YES_NO = { true: ["yes", "ok"], false: ["no", "warn"], unknown: ["unknown", "unknown"] };
  var VERIFIED = { true: ["verified", "ok"], false: ["not verified", "warn"], unknown: ["unknown", "unknown"] };
  var CHECK = { valid: ["valid", "ok"], warning: ["warning", "warn"], "no-record": ["no record", "bad"], unknown: ["unknown", "unknown"] };
  var STATUS_CLASS = { "failed shard": "bad", "interrupted shard": "bad", drifted: "bad", "not deployed": "warn", unknown: "unknown",
    "record not seen": "bad", "waiting for the customer's record": "warn", "not verified": "warn", verified: "ok" };
  var SOURCE = { service: "the service", state: "the fleet's state", inventory: "the inventory" };

  function source(name) { return el("span", { class: "source", text: "from " + SOURCE[name] }); }

  function renderTotals() {
    var totals = data.totals;
    var items = [["tenants", "Tenants"], ["domains", "Domains"], ["verified", "Verified"], ["published", "Published"],
      ["drifted", "Drifted tenants"], ["failedShards", "Failed shards"], ["needsAttention", "Need attention"], ["waiting", "Waiting for a customer"], ["unknown", "Domains with unknowns"]];
    var list = document.getElementById("totals");
    items.forEach(function (item) {
      list.appendChild(el("div", {}, [el("dt", { text: item[1] }), el("dd", { "data-total": item[0], text: String(totals[item[0]]) })]));
    });
    Object.keys(totals.stages).sort().forEach(function (stage) {
      list.appendChild(el("div", {}, [el("dt", { text: "Policy " + stage }), el("dd", { "data-stage": stage, text: String(totals.stages[stage]) })]));
    });
  }

  /** A stage's place on the way to reject: the kind first, then its percentage (quarantine-25 before quarantine). */
  function stageRank(stage) {
    var match = /^(none|quarantine|reject)(?:-(\d+))?$/.exec(stage);
    if (!match) return [0, 0];
    return [["none", "quarantine", "reject"].indexOf(match[1]) + 1, match[2] ? Number(match[2]) : 100];
  }

  function byRank(a, b) {
    var left = stageRank(a), right = stageRank(b);
    return left[0] - right[0] || left[1] - right[1] || a.localeCompare(b);
  }

  var STAGE_FILL = ["#8c959f", "#bf8700", "#0969da", "#1a7f37"];

  function swatch(stage) {
    var box = svg("svg", { width: 10, height: 10, "aria-hidden": "true" });
    box.appendChild(svg("rect", { width: 10, height: 10, fill: STAGE_FILL[stageRank(stage)[0]] }));
    return box;
  }

  /** The fleet's domains per policy stage, one bar a run, from the runs kept beside the fleet's state. */
  function renderTrend() {
    var runs = data.trend;
    var stages = Object.keys(runs.reduce(function (all, run) { Object.keys(run.stages).forEach(function (stage) { all[stage] = true; }); return all; }, {})).sort(byRank);
    var width = 480, height = 120, bar = width / runs.length;
    var chart = svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, role: "img", "data-runs": runs.length });
    runs.forEach(function (run, index) {
      var total = Object.keys(run.stages).reduce(function (sum, stage) { return sum + run.stages[stage]; }, 0) || 1, top = height;
      stages.forEach(function (stage) {
        var part = (run.stages[stage] || 0) * height / total;
        top -= part;
        if (part > 0) chart.appendChild(svg("rect", { x: (index * bar + 1).toFixed(1), y: top.toFixed(1), width: Math.max(1, bar - 2).toFixed(1), height: part.toFixed(1), fill: STAGE_FILL[stageRank(stage)[0]] }));
      });
    });
    var first = runs[0], last = runs[runs.length - 1];
    var counts = function (run) { return stages.map(function (stage) { return stage + " " + (run.stages[stage] || 0); }).join(", "); };
    var words = runs.length + " run(s) from " + first.at.slice(0, 10) + " (" + counts(first) + ") to " + last.at.slice(0, 10) + " (" + counts(last) + ")";
    chart.setAttribute("aria-label", "Domains per policy stage, " + words);
    var figure = document.getElementById("trend");
    figure.hidden = false;
    figure.appendChild(el("figcaption", { text: "Policy stages over time (bottom: furthest on the way to reject)" }));
    figure.appendChild(chart);
    figure.appendChild(el("ul", { class: "legend" }, stages.slice().reverse().map(function (stage) {
      return el("li", {}, [swatch(stage), document.createTextNode(stage + ": " + (last.stages[stage] || 0) + " now")]);
    })));
    figure.appendChild(el("p", { class: "note", text: words }));
  }

  function renderMeta() {
    var runs = Object.keys(data.lastRuns).map(function (command) { return command + " " + data.lastRuns[command]; });
    document.getElementById("meta").textContent = "Fleet " + data.fleet + ", made " + data.generatedAt + " from " +
      data.reads.requests + " service request(s); last runs: " + (runs.join(", ") || "none kept") + ".";
    renderShardFailures();
    if (data.reads.failures.length === 0) return;
    var box = document.getElementById("failures");
    box.hidden = false;
    box.appendChild(el("p", { text: data.reads.failures.length + " read(s) failed; the cells they fed read unknown:" }));
    box.appendChild(el("ul", {}, data.reads.failures.slice(0, 20).map(function (text) { return el("li", { text: text }); })));
  }

  /** Each failed shard with its own error: its tenants' cells are the fleet's last word, not the service's. */
  function renderShardFailures() {
    var failed = data.shards.filter(function (shard) { return shard.failed; });
    if (failed.length === 0) return;
    var box = document.getElementById("shard-failures");
    box.hidden = false;
    box.appendChild(el("h2", { text: failed.length + " failed shard(s): their tenants are as the fleet last left them" }));
    box.appendChild(el("ul", {}, failed.map(function (shard) {
      return el("li", { "data-shard": shard.name }, [el("strong", { text: shard.name + " (" + shard.tenants + " tenants): " }),
        el("span", { class: "error", text: shard.failure || "its last up failed" })]);
    })));
  }

  function options(select, values) {
    values.forEach(function (value) { select.appendChild(el("option", { value: value, text: value })); });
  }

  function statusCell(tenant) {
    var status = tenant.status;
    return el("td", { "data-source": status.source }, [el("span", { class: "status " + STATUS_CLASS[status.word], text: status.word }),
      status.detail ? el("span", { class: "detail", text: status.detail }) : null, source(status.source)]);
  }

  function planCell(tenant) {
    var held = tenant.subscription === "none" ? "" : tenant.subscriptionHeld ? "; held in the fleet's state" : "; none held in the fleet's state";
    return el("td", {}, [document.createTextNode(tenant.plan), el("span", { class: "detail", text: "subscription " + tenant.subscription + " (inventory)" + held })]);
  }

  function verifiedCount(tenant) {
    var known = tenant.domains.filter(function (domain) { return domain.verified !== "unknown"; });
    var verified = tenant.domains.filter(function (domain) { return domain.verified === true; }).length;
    var text = verified + " of " + tenant.domains.length;
    return known.length < tenant.domains.length ? text + " (" + (tenant.domains.length - known.length) + " unknown)" : text;
  }

  function tenantRow(tenant) {
    var button = el("button", { type: "button", class: "expand", "aria-expanded": "false", "aria-controls": "domains-" + tenant.key },
      [document.createTextNode(tenant.name + " "), el("span", { class: "key", text: tenant.key })]);
    button.addEventListener("click", function () { toggle(row, !row.expanded); });
    var link = el("a", { class: "link", href: "#tenant-" + tenant.key, "aria-label": "link to " + tenant.key, text: "#" });
    var row = el("tr", { class: "tenant", id: "tenant-" + tenant.key, "data-key": tenant.key }, [
      el("td", {}, [button, link]), el("td", { text: tenant.shard || "none yet" }), planCell(tenant),
      el("td", { text: String(tenant.domains.length) }), el("td", { text: verifiedCount(tenant) }), statusCell(tenant),
    ]);
    row.tenant = tenant;
    row.button = button;
    return row;
  }

  function reportedDays(series) {
    return series.messages.map(function (messages, index) { return messages === null ? -1 : index; })
      .filter(function (index) { return index >= 0; });
  }

  /** The lowest rate drawn: a multiple of 10 under the domain's lowest, so 97% and 99% do not look the same. */
  function floorOf(series, reported) {
    var rates = reported.map(function (index) { return Math.min(series.dkim[index], series.spf[index]); });
    return Math.max(0, Math.min(90, Math.floor((Math.min.apply(null, rates.concat([100])) - 1) / 10) * 10));
  }

  function chartOf(series, reported) {
    var width = 180, height = 40, step = width / Math.max(1, data.reads.days.length - 1), floor = floorOf(series, reported);
    var at = function (index, rate) { return [(index * step).toFixed(1), (height - 3 - (rate - floor) * (height - 6) / (100 - floor)).toFixed(1)]; };
    var chart = svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, role: "img", "data-points": reported.length, "data-floor": floor });
    ["dkim", "spf"].forEach(function (name) {
      var points = reported.map(function (index) { return at(index, series[name][index]); });
      if (points.length > 1) chart.appendChild(svg("polyline", { class: name, fill: "none", "stroke-width": 1.5, points: points.map(function (xy) { return xy.join(","); }).join(" ") }));
      points.forEach(function (xy) { chart.appendChild(svg("circle", { class: name, cx: xy[0], cy: xy[1], r: 2 })); });
    });
    return chart;
  }

  function chartCell(series) {
    var reported = reportedDays(series);
    var last = reported[reported.length - 1];
    var words = reported.length === 0 ? "no reports" : reported.length + " day(s) of reports, scale " + floorOf(series, reported) + "–100%; last " + data.reads.days[last] +
      ": DKIM " + series.dkim[last] + "%, SPF " + series.spf[last] + "%, " + series.messages[last] + " messages";
    if (series.unread.length > 0) words += "; " + series.unread.length + " day(s) unknown (read failed)";
    var chart = chartOf(series, reported);
    chart.setAttribute("aria-label", "pass rates, " + words);
    return el("span", { class: "chart" }, [chart, el("span", { class: series.unread.length > 0 ? "note unknown" : "note", text: words })]);
  }

  function publishingText(domain) {
    var where = domain.publishing;
    if (where.by === "server") return "server " + where.server + (where.zone ? " (zone " + where.zone + ")" : "");
    if (where.by === "module") return "module " + where.module;
    return "not by the fleet";
  }

  function stageText(domain) {
    if (domain.stageFrom === "observed") return domain.stage + (domain.stage !== "unknown" ? " (observed by the service)" : "");
    return domain.stage + " \u2192 target " + domain.target + " (inventory); observed " + domain.observed + " (service)";
  }

  /** The verification, and for a record the customer publishes, since when and what to send them. */
  function verificationCell(domain) {
    if (!domain.waiting) return el("td", {}, [word(domain.verified, VERIFIED)]);
    var waiting = domain.waiting, record = waiting.record;
    var since = waiting.since ? " since " + waiting.since.slice(0, 10) : "";
    return el("td", { class: "waiting" }, [el("span", { class: "warn", text: "waiting for the customer's record" + since }),
      record ? el("span", { class: "detail", text: "send: " + record.type + " " + record.host + " " }) : null,
      record ? el("code", { class: "record", text: record.value }) : el("span", { class: "detail", text: "no record in the fleet's state" })]);
  }

  function domainRow(domain) {
    return el("tr", { "data-domain": domain.name }, [
      el("td", { text: domain.name }), verificationCell(domain),
      el("td", {}, [word(domain.published, YES_NO), document.createTextNode(" \u2014 " + publishingText(domain))]),
      el("td", { class: domain.stage === "unknown" ? "unknown" : "", text: stageText(domain) }),
      el("td", { class: "checks" }, ["spf", "dkim", "dmarc"].map(function (name) {
        return el("span", { class: "check" }, [document.createTextNode(name.toUpperCase() + " "), word(domain[name], CHECK)]);
      })),
      el("td", {}, [chartCell(domain.passRates)]),
    ]);
  }

  function domainsTable(tenant) {
    var heads = ["Domain", "Verification (service)", "Record published by the fleet (state)", "Policy stage", "Records (service)",
      "Pass rates, last " + data.reads.days.length + " days (service; DKIM solid, SPF dashed)"];
    var drift = tenant.drift.length === 0 ? null : el("ul", { class: "drift" }, tenant.drift.map(function (line) { return el("li", { class: "bad", text: "drift: " + line }); }));
    var held = tenant.subscriptionHeld ? "the fleet's state holds it" : "the fleet's state holds none";
    var organization = el("p", { class: "note", text: "Organisation " + (tenant.organizationId || "none in the fleet's state") + " (state); plan " + tenant.plan +
      ", subscription " + tenant.subscription + " (inventory; " + held + ")" });
    var table = el("table", {}, [el("thead", {}, [el("tr", {}, heads.map(function (head) { return el("th", { scope: "col", text: head }); }))]),
      el("tbody", {}, tenant.domains.map(domainRow))]);
    return el("td", { class: "domains", colspan: "6" }, [organization, drift, table]);
  }

  function toggle(row, open) {
    row.expanded = open;
    row.button.setAttribute("aria-expanded", String(open));
    if (open && !row.details) row.details = el("tr", { class: "details", id: "domains-" + row.tenant.key }, [domainsTable(row.tenant)]);
    if (open) row.parentNode.insertBefore(row.details, row.nextSibling);
    else if (row.details && row.details.parentNode) row.details.parentNode.removeChild(row.details);
  }

  function matches(tenant, filter) {
    if (filter.attention && tenant.attention.length === 0) return false;
    if (filter.status && tenant.status.word !== filter.status) return false;
    if (filter.shard && tenant.shard !== filter.shard) return false;
    if (filter.stage && !tenant.domains.some(function (domain) { return domain.stage === filter.stage; })) return false;
    if (!filter.text) return true;
    var haystack = [tenant.key, tenant.name, tenant.organizationId || ""].concat(tenant.domains.map(function (domain) { return domain.name; }));
    return haystack.some(function (value) { return value.toLowerCase().indexOf(filter.text) !== -1; });
  }

  function applyFilters() {
    var filter = { attention: document.getElementById("attention").checked, status: document.getElementById("status").value, stage: document.getElementById("stage").value,
      shard: document.getElementById("shard").value, text: document.getElementById("search").value.trim().toLowerCase() };
    var shown = 0;
    rows.forEach(function (row) {
      var visible = matches(row.tenant, filter);
      row.hidden = !visible;
      if (row.details) row.details.hidden = !visible;
      if (visible) shown++;
    });
    document.getElementById("shown").textContent = shown + " of " + data.tenants.length + " tenants shown" +
      (rows.length < data.tenants.length ? " (drawing " + (data.tenants.length - rows.length) + " more)" : "");
  }

  function openFragment() {
    var match = /^#tenant-(.+)$/.exec(location.hash);
    var row = match && document.getElementById("tenant-" + decodeURIComponent(match[1]));
    if (!row || !byKey.has(row.getAttribute("data-key"))) return;
    if (row.hidden) { document.getElementById("filters").reset(); applyFilters(); }
    toggle(row, true);
    // The browser's own scroll to the fragment, at the load event, blurs what has focus: focus after it.
    if (document.readyState === "complete") focusRow(row);
    else window.addEventListener("load", function () { focusRow(row); }, { once: true });
  }

  function focusRow(row) {
    row.button.focus();
    row.scrollIntoView({ block: "start" });
  }

  /** Rows drawn before the page counts as loaded: a screenful; the rest follow in chunks, so 1,000 tenants never stall it. */
  var FIRST_ROWS = 60, CHUNK = 200;

  function appendRows(from, count) {
    var fragment = document.createDocumentFragment();
    var end = Math.min(from + count, data.tenants.length);
    for (var index = from; index < end; index++) {
      var row = tenantRow(data.tenants[index]);
      rows.push(row);
      fragment.appendChild(row);
    }
    document.getElementById("tenant-rows").appendChild(fragment);
    applyFilters();
    if (end < data.tenants.length) setTimeout(function () { appendRows(end, CHUNK); }, 0);
    else {
      document.body.setAttribute("data-rows", "all");
      performance.mark("fleet-rows-drawn");
      openFragment();
    }
  }

  function start() {
    renderMeta();
    renderTotals();
    renderTrend();
    options(document.getElementById("status"), Object.keys(STATUS_CLASS).filter(function (word) {
      return data.tenants.some(function (tenant) { return tenant.status.word === word; });
    }));
    options(document.getElementById("stage"), Object.keys(data.totals.stages).sort());
    options(document.getElementById("shard"), data.shards.map(function (shard) { return shard.name; }));
    document.getElementById("filters").addEventListener("input", applyFilters);
    document.getElementById("filters").addEventListener("submit", function (event) { event.preventDefault(); });
    window.addEventListener("hashchange", openFragment);
    appendRows(0, FIRST_ROWS);
  }

  start();
})();
`;
