import type { FleetPage } from "./model";
import { pageScript } from "./script";
import { PAGE_STYLES } from "./styles";

// The fleet page as one HTML file: styles, script and data inline, and a
// content security policy that lets the page load nothing else, so it reads
// the same offline from a pipeline's artifacts.

const POLICY = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

function escapeText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** JSON safe inside a script element: no `</script>` or `<!--` can end it early. */
function embeddedJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c");
}

export function fleetPageHtml(page: FleetPage): string {
  const title = `Fleet ${escapeText(page.fleet)}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${PAGE_STYLES}</style>
</head>
<body>
<header>
<h1>${title}</h1>
<p class="meta" id="meta"></p>
<section class="failures" id="shard-failures" aria-label="Failed shards" hidden></section>
<div class="failures" id="failures" role="alert" hidden></div>
<dl class="totals" id="totals" aria-label="Fleet totals"></dl>
<figure class="trend" id="trend" hidden></figure>
</header>
<main>
<form class="filters" id="filters" role="search" aria-controls="tenants">
<label class="check"><input type="checkbox" id="attention"> Needs attention only</label>
<label>Status <select id="status"><option value="">all statuses</option></select></label>
<label>Policy stage <select id="stage"><option value="">all stages</option></select></label>
<label>Shard <select id="shard"><option value="">all shards</option></select></label>
<label>Search <input type="search" id="search" placeholder="tenant, domain or organisation id"></label>
<output id="shown" aria-live="polite"></output>
</form>
<table id="tenants">
<caption class="note">One row per tenant; open a row (Enter or Space on its name) for its domains.</caption>
<thead><tr><th scope="col">Tenant</th><th scope="col">Shard (state)</th><th scope="col">Plan</th><th scope="col">Domains (inventory)</th><th scope="col">Verified (service)</th><th scope="col">Status</th></tr></thead>
<tbody id="tenant-rows"></tbody>
</table>
</main>
<script type="application/json" id="fleet-data">${embeddedJson(page)}</script>
<script type="module">${pageScript()}</script>
</body>
</html>
`;
}
