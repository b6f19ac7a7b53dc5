import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { installedOrWhyNot } from "./debianPackages";

// A real headless browser for the fleet page's test and bench: Debian's
// chromium (installed with apt-get when missing, as the DNS servers are),
// driven by puppeteer-core through its executablePath. Opening a page
// records every request the page makes and every console error, so a
// caller can check that a self-contained page asks for nothing but itself.

const CHROMIUM = "/usr/bin/chromium";
const PACKAGES = ["chromium"];

/** Why chromium cannot run here, or undefined when it can: a missing browser is installed with apt-get first. */
export function chromiumUnavailable(): Promise<string | undefined> {
  return installedOrWhyNot(PACKAGES, () => (existsSync(CHROMIUM) ? [] : [CHROMIUM]));
}

/** Headless chromium; as root it runs without its sandbox, which needs a user of its own. */
export function launchBrowser(): Promise<Browser> {
  const sandbox = process.getuid?.() === 0 ? ["--no-sandbox"] : [];
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...sandbox, "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage"],
  });
}

/** A page opened from a file, with what it asked the network for and what it logged as errors. */
export interface OpenedPage {
  page: Page;
  /** Every URL the page requested, its own file first. */
  requests: string[];
  /** Console errors and uncaught exceptions, in order. */
  errors: string[];
  /** Milliseconds from navigation start to the load event, as the browser measured them. */
  loadEventMs: number;
}

/** Set by the fleet page once its last row is drawn (it draws a screenful before loading, the rest right after). */
export const ROWS_DRAWN = 'body[data-rows="all"]';

/** Opens the file (at `fragment`), waits for its load event and then for `ready`, a selector, when given. */
export async function openFile(browser: Browser, file: string, fragment = "", ready?: string): Promise<OpenedPage> {
  const page = await browser.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(`${pathToFileURL(file).href}${fragment}`, { waitUntil: "load", timeout: 120_000 });
  if (ready) await page.waitForSelector(ready, { timeout: 120_000 });
  // A string: the bench and tests compile without the DOM's types.
  const loadEventMs = (await page.evaluate(
    `(() => { const [entry] = performance.getEntriesByType("navigation"); return entry ? entry.loadEventStart - entry.startTime : NaN; })()`,
  )) as number;
  return { page, requests, errors, loadEventMs };
}
