// The fleet page's style sheet, inlined into the page: status is always in
// words beside its colour, so the page reads the same without colour.

export const PAGE_STYLES = `
:root { color-scheme: light dark; --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; --unknown: #6e7781; --line: #d0d7de; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
.meta { color: var(--unknown); margin: 0 0 1rem; }
.totals { display: flex; flex-wrap: wrap; gap: .5rem; margin: 0 0 1rem; padding: 0; }
.totals div { border: 1px solid var(--line); border-radius: 6px; padding: .4rem .75rem; min-width: 7rem; }
.totals dt { font-size: .8rem; color: var(--unknown); }
.totals dd { margin: 0; font-size: 1.25rem; font-weight: 600; }
.filters { display: flex; flex-wrap: wrap; gap: 1rem; align-items: end; margin: 0 0 .75rem; }
.filters label { display: flex; flex-direction: column; font-size: .85rem; gap: .2rem; }
.filters label.check { flex-direction: row; align-items: center; gap: .4rem; }
input, select, button { font: inherit; }
input[type=search] { min-width: 16rem; }
:focus-visible { outline: 3px solid #0969da; outline-offset: 2px; }
table { border-collapse: collapse; width: 100%; }
/* A fixed layout sizes the columns from the header alone: 1,000 rows cost no column measuring. */
#tenants { table-layout: fixed; }
#tenants > thead th:nth-child(1) { width: 28%; } #tenants > thead th:nth-child(2) { width: 17%; }
#tenants > thead th:nth-child(3) { width: 10%; } #tenants > thead th:nth-child(4) { width: 8%; }
#tenants > thead th:nth-child(5) { width: 12%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; }
tr.tenant:target td { background: rgba(9, 105, 218, .08); }
button.expand { background: none; border: 0; padding: 0; cursor: pointer; text-align: left; font-weight: 600; }
button.expand::before { content: "\\25B8  "; }
button.expand[aria-expanded=true]::before { content: "\\25BE  "; }
.key { color: var(--unknown); font-weight: 400; }
.link { margin-left: .4rem; color: var(--unknown); text-decoration: none; }
.status { font-weight: 600; }
.ok { color: var(--ok); } .warn { color: var(--warn); } .bad { color: var(--bad); } .unknown { color: var(--unknown); font-style: italic; }
td.domains { background: rgba(127, 127, 127, .06); padding: .5rem 1rem 1rem; }
td.domains table th, td.domains table td { font-size: .85rem; }
.chart { display: inline-flex; align-items: center; gap: .5rem; }
.chart svg { border: 1px solid var(--line); border-radius: 3px; }
.chart .dkim { stroke: #0969da; } .chart .spf { stroke: #8250df; stroke-dasharray: 3 2; }
.chart circle.dkim { fill: #0969da; stroke: none; } .chart circle.spf { fill: #8250df; stroke: none; }
.note { color: var(--unknown); font-size: .8rem; }
.drift { margin: 0 0 .5rem; padding-left: 1.2rem; }
.failures { border-left: 3px solid var(--bad); padding: .25rem .75rem; margin: 0 0 1rem; }
`;
