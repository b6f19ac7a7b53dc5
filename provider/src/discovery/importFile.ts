import { parseInventory } from "../inventory/inventory";
import { appendedInventoryText, type InventoryAdditions, newInventoryText, withClosingComments } from "./document";
import type { ProposedTenant } from "./entries";
import type { Candidate } from "./judging";

// Writing an import's inventory file. Each write is the whole file,
// checked as the fleet will read it, so an import cut short leaves a file
// that reads back whole.

/**
 * The most of an import's time its file writes take. Each write's cost
 * grows with the file: an import faster than the service's pace (the
 * emulator, a generous limit) holds batches back until the time since the
 * last write is ten times what that write took, which keeps 1,000
 * organisations linear.
 */
const WRITE_TIME_SHARE = 0.1;

/** A tenant's comment lines: why its key is what it is, then what its entry leaves out. */
function commentsOf(proposal: ProposedTenant): string[] {
  return [...(proposal.keyNote ? [proposal.keyNote] : []), ...proposal.leftOut.map((line) => `left out: ${line}`)];
}

/**
 * The whole file as the fleet will read it (its `defaults:` applied, every
 * cross-check made) must hold each new tenant exactly as it was checked.
 */
function checkWritten(text: string, source: string, candidates: readonly Candidate[]): void {
  const written = new Map(parseInventory(text, source).tenants.map((tenant) => [tenant.key, tenant]));
  for (const { parsed } of candidates) {
    const { label: _checkedLabel, ...checked } = parsed;
    const { label: _writtenLabel, ...found } = written.get(parsed.key) ?? { label: "" };
    if (JSON.stringify(found) !== JSON.stringify(checked)) {
      throw new Error(`${source}: tenant "${parsed.key}" would not read back as it was checked`);
    }
  }
}

/** The inventory file an import writes: its text as last written, and the entries held back from it. */
export class ImportFile {
  private pending: Candidate[] = [];
  /** When the file was last written, and how long that took (ms, `performance.now()`). */
  private lastWrite = { at: performance.now(), tookMs: 0 };
  /** Whole-file writes so far. */
  writes = 0;

  /**
   * @param name the file's name, for messages
   * @param writeText writes the file's whole new text, at once
   * @param text the file's text as it is; undefined for a new file
   */
  constructor(
    private readonly name: string,
    private readonly writeText: (text: string) => void,
    private text: string | undefined,
  ) {}

  /** Entries read but not in the file yet. */
  get heldBack(): number {
    return this.pending.length;
  }

  /** Adds the batch's entries: written now after the last batch, or once writing is cheap beside reading. */
  add(candidates: readonly Candidate[], last: boolean): void {
    this.pending.push(...candidates);
    if (last || (performance.now() - this.lastWrite.at) * WRITE_TIME_SHARE >= this.lastWrite.tookMs) this.flush();
  }

  /** Writes the entries held back, if any, after those in the file. */
  flush(): void {
    if (this.pending.length === 0) return;
    const started = performance.now();
    const tenants = this.pending.map(({ proposal }) => ({ entry: proposal.entry, comments: commentsOf(proposal) }));
    this.write({ tenants, trailing: [] }, this.pending);
    this.pending = [];
    const ended = performance.now();
    this.lastWrite = { at: ended, tookMs: ended - started };
  }

  /** The closing lines: after a new file's tenants, or (appending) after the last one added. */
  close(trailing: readonly string[], appending: boolean): void {
    if (appending || this.text === undefined) {
      this.write({ tenants: [], trailing }, []);
      return;
    }
    if (trailing.length === 0) return;
    this.text = withClosingComments(this.text, trailing);
    this.writeText(this.text);
    this.writes += 1;
  }

  /** The file with the additions, checked, handed to the writer; nothing when they add nothing. */
  private write(additions: InventoryAdditions, candidates: readonly Candidate[]): void {
    const text = this.text === undefined ? newInventoryText(additions) : appendedInventoryText(this.text, additions);
    if (text === undefined) return;
    checkWritten(text, this.name, candidates);
    this.writeText(text);
    this.text = text;
    this.writes += 1;
  }
}
