import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../scripts/project.mjs";

// provider/src as CONTRIBUTING's "Finding your room" describes it: a folder a
// newcomer can take in at a glance, and the floors that grew past that split
// into rooms that each say their job.

const source = join(projectRoot, "provider", "src");
const MOST_MODULES = 12;
/** Folders allowed more modules, each small and alike, so a longer list reads as well. */
const LONGER_FOLDERS: Record<string, string> = {
  api: "one wire schema per API family or shared rule, each short",
  receiver: "the receiver kit's checks, one per file, and its own README",
};
/** The floors split into rooms; every folder inside one is a room. */
const FLOORS = ["fleet", "client"];

const folders = (folder: string): string[] =>
  readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(folder, entry.name));
const allFolders = (folder: string): string[] => [folder, ...folders(folder).flatMap(allFolders)];
const modulesIn = (folder: string) => readdirSync(folder).filter((name) => name.endsWith(".ts"));
const rooms = () => FLOORS.flatMap((floor) => folders(join(source, floor)).map((room) => relative(source, room)));

function findingYourRoom(): string {
  const text = readFileSync(join(projectRoot, "CONTRIBUTING.md"), "utf8");
  const start = text.indexOf("### Finding your room");
  return text.slice(start, text.indexOf("\n## ", start));
}

describe("provider/src's rooms", () => {
  it(`hold at most ${MOST_MODULES} modules a folder, but for the listed longer ones`, () => {
    const crowded = allFolders(source)
      .map((folder) => ({ name: relative(source, folder), count: modulesIn(folder).length }))
      .filter(({ name, count }) => count > MOST_MODULES && !(name in LONGER_FOLDERS))
      .map(({ name, count }) => `${name}/ holds ${count} modules`);
    expect(crowded).toEqual([]);
  });

  it("say their job in the one line of their README.md", () => {
    const unsaid = [...FLOORS, ...rooms()].flatMap((room) => {
      const readme = join(source, room, "README.md");
      if (!existsSync(readme)) return [`${room}/ has no README.md`];
      const lines = readFileSync(readme, "utf8").trimEnd().split("\n");
      return lines.length === 1 && lines[0]?.startsWith(`\`${room}/\`: `)
        ? []
        : [`${room}/README.md is not one line starting "\`${room}/\`: "`];
    });
    expect(unsaid).toEqual([]);
  });

  it("are the rooms CONTRIBUTING's Finding your room names", () => {
    const section = findingYourRoom();
    const named = new Set([...section.matchAll(/`((?:fleet|client)\/[a-z]+)\/`/g)].map((match) => match[1] as string));
    expect([...named].sort()).toEqual(rooms().sort());
  });
});
