// A .tar.gz written in the process, as the plugin's archives are: the
// executable at its root, with README.md and LICENSE, and no dates, so the
// same files make the same bytes.

import { gzipSync } from "node:zlib";

/** One ustar entry: a 512-byte header and the content padded to 512 bytes. */
function tarEntry(name, content, mode) {
  const header = Buffer.alloc(512);
  const field = (offset, length, value) => header.write(value, offset, length, "ascii");
  const octal = (offset, length, value) => field(offset, length, `${value.toString(8).padStart(length - 1, "0")}\0`);
  field(0, 100, name);
  octal(100, 8, mode);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, content.length);
  octal(136, 12, 0);
  field(148, 8, "        ");
  field(156, 1, "0");
  field(257, 8, "ustar\u000000");
  let sum = 0;
  for (const byte of header) sum += byte;
  field(148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return [header, content, Buffer.alloc((512 - (content.length % 512)) % 512)];
}

/** A .tar.gz of `entries` ({ name, content, mode }) at its root; no dates, so the same files make the same bytes. */
export function tarGz(entries) {
  const parts = entries.flatMap(({ name, content, mode }) => tarEntry(name, content, mode));
  return gzipSync(Buffer.concat([...parts, Buffer.alloc(1024)]));
}
