// Headless chromium for the fleet page's test lives with the bench, which
// measures the same page and cannot import test code.
export * from "../../bench/src/browser";
