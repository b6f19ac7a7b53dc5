import axe from "axe-core";
import type { Page } from "puppeteer-core";

// axe-core's audit of a page as it stands: its source injected into the
// page, run over the whole document. The fleet page's policy forbids
// foreign scripts; the injection goes through the browser's debugging
// protocol, which that policy does not govern, so the page is audited as
// it is served.

/** A rule a page broke, with the first few elements that break it. */
export interface Violation {
  id: string;
  impact: string;
  nodes: string[];
}

/** What axe-core calls serious or critical: what WCAG 2.1 AA does not allow. */
const BLOCKING = new Set(["serious", "critical"]);

/** The page's serious and critical violations of WCAG 2.1 A and AA. */
export async function blockingViolations(page: Page): Promise<Violation[]> {
  await page.evaluate(axe.source);
  // A string: the tests compile without the DOM's types, and `axe` is the page's global.
  const found = (await page.evaluate(`axe.run(document, {
    runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
    resultTypes: ["violations"],
  }).then((result) => result.violations.map((rule) => ({
    id: rule.id,
    impact: rule.impact,
    nodes: rule.nodes.slice(0, 3).map((node) => node.html + ": " + node.failureSummary),
  })))`)) as Violation[];
  return found.filter((violation) => BLOCKING.has(violation.impact));
}
