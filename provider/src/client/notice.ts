// The lines that tell a person why a run is waiting (the rate limit, the
// pacing). They start with one prefix, so whoever relays a provider's output
// (the fleet's progress) can tell them from the rest.

export const NOTICE_PREFIX = "dmarc: ";

/** A notice's text, prefixed. */
export function noticeLine(text: string): string {
  return `${NOTICE_PREFIX}${text}`;
}

/** Where notices go unless the client is given another place: standard error, which the engine shows. */
export function writeToStandardError(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** A duration as people read it: whole seconds from 10 s on, tenths below. */
export function seconds(ms: number): string {
  const value = ms / 1000;
  return `${value >= 10 ? Math.round(value) : value.toFixed(1)} s`;
}
