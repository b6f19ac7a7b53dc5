import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { progressSink, summaryTable } from "../../provider/src/fleet/progress";
import { firstErrorLine } from "../../provider/src/fleet/shard/shardJob";

// What a CI log and a terminal show of a fleet run.

function captured(tty: boolean): { stream: PassThrough & { isTTY?: boolean }; text: () => string } {
  const stream: PassThrough & { isTTY?: boolean } = new PassThrough();
  stream.isTTY = tty;
  let text = "";
  stream.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { stream, text: () => text };
}

const failed = {
  shard: "prod-002",
  operation: "up",
  status: "failed" as const,
  tenants: 2,
  changes: {},
  seconds: 12,
  error: "error: POST /v1/domains answered 503",
  log: ".dmarc-fleet/logs/prod-002.up.log",
};
const done = {
  shard: "prod-001",
  operation: "up",
  status: "done" as const,
  tenants: 2,
  changes: { create: 7, same: 1 },
  seconds: 75,
};

describe("fleet progress", () => {
  it("writes one plain line per shard event without a terminal", async () => {
    const { stream, text } = captured(false);
    const sink = progressSink(stream, 2);
    sink.started("prod-001", "up");
    sink.finished(done);
    sink.finished(failed);
    sink.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect(text().split("\n")).toEqual([
      "prod-001: up started",
      "prod-001: up done, 7 changed in 1m15s",
      "prod-002: up failed: error: POST /v1/domains answered 503 in 12s",
      "",
    ]);
  });

  it("keeps a status line of counts, changes and time under the events on a terminal", async () => {
    const { stream, text } = captured(true);
    const sink = progressSink(stream, 3);
    sink.started("prod-001", "up");
    sink.finished(done);
    await new Promise((resolve) => setImmediate(resolve));
    expect(text()).toMatch(
      /shards: 2 queued, 0 running, 1 done, 0 failed · 7 resources changed · \d+s elapsed · ~2m30s left$/,
    );
  });

  it("lists every failed shard with its first error line and log file under the table", () => {
    expect(summaryTable([done, failed]).split("\n")).toEqual([
      "shard     operation  status  tenants  changes   time",
      "--------  ---------  ------  -------  --------  -----",
      "prod-001  up         done    2        create 7  1m15s",
      "prod-002  up         failed  2        -         12s",
      "",
      "1 shard(s) failed:",
      "  prod-002: error: POST /v1/domains answered 503 (log: .dmarc-fleet/logs/prod-002.up.log)",
    ]);
  });

  it("takes the engine's error line from a failed run's output", () => {
    const message = [
      "code: 255",
      " stdout: Updating (prod-002):",
      " + dmarc:index:Tenant foxtrot creating",
      " stderr: error: update failed",
      "  error: Domain foxtrot.example: the service answered 503 Service Unavailable",
    ].join("\n");
    expect(firstErrorLine(new Error(message))).toBe(
      "error: Domain foxtrot.example: the service answered 503 Service Unavailable",
    );
  });
});
