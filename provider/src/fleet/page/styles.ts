// The fleet page's style sheet, inlined into the page: status is always in
// words beside its colour, so the page reads the same without colour; each
// colour keeps WCAG AA's 4.5:1 on the page, an opened tenant's grey and a
// linked row's blue, in the light scheme and in the dark one a browser set
// to dark mode draws. The body's colours are the scheme's own (Canvas,
// CanvasText), named so that an audit sees the background that is drawn.

export const PAGE_STYLES = `
:root { color-scheme: light dark; --ok: #116329; --warn: #7d4e00; --bad: #a40e26; --unknown: #57606a; --line: #d0d7de; --focus: #0969da; --dkim: #0969da; --spf: #8250df; }
@media (prefers-color-scheme: dark) {
  :root { --ok: #3fb950; --warn: #d29922; --bad: #ff7b72; --unknown: #9198a1; --line: #3d444d; --focus: #4493f8; --dkim: #4493f8; --spf: #ab7df8; }
}
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1200px; padding: 1rem 1.5rem 3rem; background: Canvas; color: CanvasText; }
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
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
table { border-collapse: collapse; width: 100%; }
/* A fixed layout sizes the columns from the header alone: 1,000 rows cost no column measuring. */
#tenants { table-layout: fixed; }
#tenants > thead th:nth-child(1) { width: 24%; } #tenants > thead th:nth-child(2) { width: 11%; }
#tenants > thead th:nth-child(3) { width: 18%; } #tenants > thead th:nth-child(4) { width: 10%; }
#tenants > thead th:nth-child(5) { width: 10%; }
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
td.domains table th, td.domains table td { font-size: .85rem; overflow-wrap: break-word; }
/* The chart keeps its drawn width: words wrap under it rather than squeeze it, on screen and on paper. */
.chart { display: flex; flex-direction: column; gap: .25rem; width: 180px; }
.chart svg { flex: none; border: 1px solid var(--line); border-radius: 3px; }
td.domains table td:last-child { min-width: calc(180px + 1rem); }
.chart .dkim { stroke: var(--dkim); } .chart .spf { stroke: var(--spf); stroke-dasharray: 3 2; }
.chart circle.dkim { fill: var(--dkim); stroke: none; } .chart circle.spf { fill: var(--spf); stroke: none; }
.detail, .source, .checks .check { display: block; font-size: .8rem; }
.source { color: var(--unknown); }
code.record { font-size: .8rem; word-break: break-all; }
.trend { margin: 0 0 1rem; }
.trend figcaption { font-weight: 600; margin: 0 0 .25rem; }
.trend svg { max-width: 100%; height: auto; }
.legend { display: flex; flex-wrap: wrap; gap: .75rem; list-style: none; margin: .25rem 0; padding: 0; font-size: .85rem; }
.legend svg { margin-right: .3rem; }
.failures h2 { font-size: 1rem; margin: .25rem 0; }
.note { color: var(--unknown); font-size: .8rem; }
.drift { margin: 0 0 .5rem; padding-left: 1.2rem; }
.failures { border-left: 3px solid var(--bad); padding: .25rem .75rem; margin: 0 0 1rem; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  .filters, .link { display: none; }
  tr { break-inside: avoid; }
  td.domains { background: none; padding: .25rem 0 .5rem; }
  th { text-transform: none; letter-spacing: 0; }
  /* Paper is narrower than a screen: long names break anywhere so the charts keep their width. */
  td.domains table th, td.domains table td { overflow-wrap: anywhere; }
}
`;
